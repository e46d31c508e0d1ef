-- cublas_spec.lua: kreach.cublas.gemm against an fp64 reference computed here, in Lua, from the
-- tensors' own contents (so f16/bf16 inputs are the rounded values the GPU saw).
-- Errors are measured per element relative to scale = |alpha| * sum_p |a_ip b_pj| + |beta| |c_ij|,
-- the quantity that floating-point error bounds for a dot product are proportional to.
local kreach = require "kreach"
local gpu = kreach.has_device()
local it_gpu = gpu and it or pending

local seed = tonumber(os.getenv("KREACH_SEED")) or 1234

local DTYPES = { "f64", "f32", "f16", "bf16" }
local TRANS = { { false, false }, { true, false }, { false, true }, { true, true } }

-- Tolerance relative to the per-element scale, for the odd shapes below (k = 53).
--   f64: the worst-case bound for a k-term dot product is about k*u = 53 * 2^-53 = 5.9e-15;
--        1e-12 leaves room for another summation order and is still far below f32's 6e-8.
--   f32: k*u = 53 * 2^-24 = 3.2e-6 worst case, plus the roundings of alpha*acc + beta*c;
--        1e-5 covers it. TF32 leaking in (inputs rounded to 10 mantissa bits) would give
--        errors of about 1e-4 relative to the scale, so this also says TF32 is off.
--   f16, bf16: the products of 16-bit inputs are exact in fp32 and the fp32 sum adds at most
--        3.2e-6; the final rounding to the output dtype is at most half an ulp, eps/2 relative
--        (eps = 2^-10 for f16, 2^-7 for bf16). 2*eps is four times that worst case.
local TOL = { f64 = 1e-12, f32 = 1e-5, f16 = 2 * 2 ^ -10, bf16 = 2 * 2 ^ -7 }

local function rand(shape, dtype, s)
    local t = kreach.empty(shape, dtype)
    t:uniform(-1, 1, s)
    return t
end

-- with_batch({m, k}, 3) -> {3, m, k}; with_batch({m, k}, nil) -> {m, k}
local function with_batch(shape, b)
    if not b then return shape end
    return { b, shape[1], shape[2] }
end

-- The fp64 reference of C = alpha * op(A) @ op(B) + beta * C0 over flat row-major arrays.
-- g: m, n, k, trans_a, trans_b, alpha, beta, batch, batch_a, batch_b (batches 1 when 2-D).
-- Returns the reference and the per-element scale (see the top of the file).
local function reference(A, B, C0, g)
    local m, n, k = g.m, g.n, g.k
    local ref, scale = {}, {}
    for z = 0, g.batch - 1 do
        local ao = (g.batch_a > 1 and z or 0) * m * k
        local bo = (g.batch_b > 1 and z or 0) * k * n
        for i = 0, m - 1 do
            for j = 0, n - 1 do
                local acc, s = 0.0, 0.0
                for p = 0, k - 1 do
                    local x = g.trans_a and A[ao + p * m + i + 1] or A[ao + i * k + p + 1]
                    local y = g.trans_b and B[bo + j * k + p + 1] or B[bo + p * n + j + 1]
                    acc = acc + x * y
                    s = s + math.abs(x * y)
                end
                local q = z * m * n + i * n + j + 1
                -- with beta 0 the old C is not read (it may hold NaN), as in BLAS
                local c0 = g.beta ~= 0 and C0[q] or 0
                ref[q] = g.alpha * acc + g.beta * c0
                scale[q] = math.abs(g.alpha) * s + math.abs(g.beta) * math.abs(c0)
            end
        end
    end
    return ref, scale
end

-- The largest |got - ref| / scale; math.huge for a NaN or a missing element.
local function worst_error(got, ref, scale)
    assert.equals(#ref, #got)
    local worst = 0
    for q = 1, #ref do
        local e = math.abs(got[q] - ref[q]) / math.max(scale[q], 1e-300)
        if e ~= e then return math.huge end
        if e > worst then worst = e end
    end
    return worst
end

local function assert_within(worst, tol, what)
    assert.is_true(worst <= tol, ("%s: largest error %.3g of the scale, tolerance %.3g"):format(
        what, worst, tol))
end

-- Runs one GEMM on random data and returns its largest relative error.
-- g: dtype, m, n, k, trans_a, trans_b, alpha, beta, batch (nil: 2-D), batch_a, batch_b, seed
local function check_gemm(g)
    local m, n, k = g.m, g.n, g.k
    local a = rand(with_batch(g.trans_a and { k, m } or { m, k }, g.batch_a or g.batch), g.dtype,
        g.seed)
    local b = rand(with_batch(g.trans_b and { n, k } or { k, n }, g.batch_b or g.batch), g.dtype,
        g.seed + 1)
    local c = rand(with_batch({ m, n }, g.batch), g.dtype, g.seed + 2)
    if g.beta == 0 then c:fill(0 / 0) end -- must not be read
    local A, B, C0 = a:to_table(), b:to_table(), c:to_table()
    local out = kreach.cublas.gemm(c, a, b, { trans_a = g.trans_a, trans_b = g.trans_b,
        alpha = g.alpha, beta = g.beta })
    assert.equals(c, out) -- gemm returns its output tensor
    local ref, scale = reference(A, B, C0, {
        m = m, n = n, k = k, trans_a = g.trans_a, trans_b = g.trans_b, alpha = g.alpha,
        beta = g.beta, batch = g.batch or 1, batch_a = g.batch_a or g.batch or 1,
        batch_b = g.batch_b or g.batch or 1 })
    return worst_error(c:to_table(), ref, scale)
end

local function label(tr)
    return (tr[1] and "A^T" or "A") .. " @ " .. (tr[2] and "B^T" or "B")
end

describe("kreach.cublas.gemm", function()
    for _, dtype in ipairs(DTYPES) do
        for _, tr in ipairs(TRANS) do
            it_gpu(dtype .. " " .. label(tr) .. " on 37x29x53, beta 0 over a NaN-filled C",
                function()
                    print("seed", seed)
                    local worst = check_gemm { dtype = dtype, m = 37, n = 29, k = 53,
                        trans_a = tr[1], trans_b = tr[2], alpha = 1, beta = 0, seed = seed }
                    assert_within(worst, TOL[dtype], dtype) -- TOL: see the top of the file
                end)
            it_gpu(dtype .. " " .. label(tr) .. " with alpha 0.75, beta -1.5 and a random C",
                function()
                    print("seed", seed)
                    -- 0.75 and -1.5 are exact in every dtype, so only the GEMM rounds
                    local worst = check_gemm { dtype = dtype, m = 37, n = 29, k = 53,
                        trans_a = tr[1], trans_b = tr[2], alpha = 0.75, beta = -1.5,
                        seed = seed + 10 }
                    assert_within(worst, TOL[dtype], dtype)
                end)
        end
    end

    for _, tr in ipairs(TRANS) do
        it_gpu("strided batched f32 " .. label(tr) .. ", batch 3", function()
            print("seed", seed)
            local worst = check_gemm { dtype = "f32", m = 37, n = 29, k = 53, trans_a = tr[1],
                trans_b = tr[2], alpha = 0.75, beta = -1.5, batch = 3, seed = seed + 20 }
            assert_within(worst, TOL.f32, "f32 batched") -- as for 2-D f32: same k
        end)
    end

    it_gpu("strided batched f16 and bf16, batch 3", function()
        print("seed", seed)
        for _, dtype in ipairs { "f16", "bf16" } do
            local worst = check_gemm { dtype = dtype, m = 37, n = 29, k = 53, trans_a = true,
                trans_b = false, alpha = 1, beta = 0, batch = 3, seed = seed + 30 }
            assert_within(worst, TOL[dtype], dtype .. " batched")
        end
    end)

    it_gpu("a batch of 1 in A or B is used for every matrix of C", function()
        print("seed", seed)
        local wa = check_gemm { dtype = "f32", m = 37, n = 29, k = 53, trans_a = false,
            trans_b = true, alpha = 1, beta = 0.5, batch = 3, batch_a = 1, seed = seed + 40 }
        assert_within(wa, TOL.f32, "A broadcast")
        local wb = check_gemm { dtype = "f32", m = 37, n = 29, k = 53, trans_a = true,
            trans_b = false, alpha = 1, beta = 0.5, batch = 3, batch_b = 1, seed = seed + 50 }
        assert_within(wb, TOL.f32, "B broadcast")
    end)

    it_gpu("defaults to alpha 1, beta 0, no transposes", function()
        print("seed", seed)
        local a, b = rand({ 3, 4 }, "f64", seed + 60), rand({ 4, 2 }, "f64", seed + 61)
        local c = kreach.empty({ 3, 2 }, "f64")
        c:fill(0 / 0)
        kreach.cublas.gemm(c, a, b)
        local ref, scale = reference(a:to_table(), b:to_table(), {}, { m = 3, n = 2, k = 4,
            alpha = 1, beta = 0, batch = 1, batch_a = 1, batch_b = 1 })
        assert_within(worst_error(c:to_table(), ref, scale), TOL.f64, "defaults")
    end)

    it_gpu("k = 0 scales C by beta; an empty C is no work", function()
        local a, b = kreach.empty({ 5, 0 }, "f32"), kreach.empty({ 0, 4 }, "f32")
        local c = kreach.empty({ 5, 4 }, "f32")
        c:fill(2)
        kreach.cublas.gemm(c, a, b, { alpha = 7, beta = 3 })
        for _, v in ipairs(c:to_table()) do assert.equals(6, v) end -- exact: 3 * 2
        local e = kreach.empty({ 0, 4 }, "f32")
        kreach.cublas.gemm(e, kreach.empty({ 0, 3 }, "f32"), kreach.empty({ 3, 4 }, "f32"))
    end)

    -- TF32 keeps 10 of fp32's 23 mantissa bits, so on inputs with full 24-bit mantissas (uniform
    -- draws) each product is off by up to about 2^-10 relative: normwise about 4e-4, against
    -- under 1e-6 for pedantic fp32. Sizes that are multiples of 16 make cuBLAS's choice of a
    -- tensor-core kernel certain in practice (tf32 permits TF32; it does not force it).
    -- NVIDIA_TF32_OVERRIDE=0 disables TF32 process-wide, and then the test cannot hold.
    local it_tf32 = (gpu and os.getenv("NVIDIA_TF32_OVERRIDE") ~= "0") and it or pending
    it_tf32("tf32 = true rounds f32 inputs to TF32, within 1e-2", function()
        print("seed", seed)
        local m, n, k = 128, 128, 256
        local a, b = rand({ m, k }, "f32", seed + 70), rand({ k, n }, "f32", seed + 71)
        local ped, fast = kreach.empty({ m, n }, "f32"), kreach.empty({ m, n }, "f32")
        kreach.cublas.gemm(ped, a, b)
        kreach.cublas.gemm(fast, a, b, { tf32 = true })
        local P, F = ped:to_table(), fast:to_table()
        local ref, scale = reference(a:to_table(), b:to_table(), {}, { m = m, n = n, k = k,
            alpha = 1, beta = 0, batch = 1, batch_a = 1, batch_b = 1 })
        local dn, pn, rn = 0, 0, 0
        for q = 1, #P do
            dn = dn + (F[q] - P[q]) ^ 2
            pn = pn + P[q] ^ 2
            rn = rn + (P[q] - ref[q]) ^ 2
        end
        local diff, ped_err = math.sqrt(dn / pn), math.sqrt(rn / pn)
        print(("tf32 vs pedantic: normwise %.3g; pedantic vs fp64: %.3g"):format(diff, ped_err))
        -- pedantic fp32 is at fp32 rounding: a k-term sum's rounding errors add up to about
        -- 2^-24 * sqrt(k/2) = 7e-7 normwise at most, typically less; 3e-6 bounds it ...
        assert.is_true(ped_err < 3e-6, ("pedantic f32 normwise error %.3g"):format(ped_err))
        -- ... and TF32 differs from it far more (each product off by ~4e-4 rms, so ~4e-4
        -- normwise; 3e-5 is ten times under that and ten times over pedantic's bound)
        assert.is_true(diff > 3e-5, ("tf32 differs from pedantic by only %.3g"):format(diff))
        -- worst case per product ~2^-10 relative, so 1e-2 of the scale bounds every element
        assert_within(worst_error(F, ref, scale), 1e-2, "tf32")
    end)

    describe("rejects", function()
        local function err_of(f)
            assert.has_error(f)
            local ok, e = pcall(f)
            assert.is_false(ok)
            return tostring(e)
        end
        local function gemm_err(sa, sb, sc, opts, da, db, dc)
            local a = kreach.empty(sa, da or "f32")
            local b = kreach.empty(sb, db or "f32")
            local c = kreach.empty(sc, dc or "f32")
            return err_of(function() kreach.cublas.gemm(c, a, b, opts) end)
        end

        it_gpu("mismatched inner sizes", function()
            assert.matches("gemm: A is 4x5 but B is 6x7: inner sizes 5 and 6 differ",
                gemm_err({ 4, 5 }, { 6, 7 }, { 4, 7 }), 1, true)
            assert.matches("A^T is 4x5 (A is 5x4) but B is 6x7: inner sizes 5 and 6 differ",
                gemm_err({ 5, 4 }, { 6, 7 }, { 4, 7 }, { trans_a = true }), 1, true)
            assert.matches("A is 3x4x5 but B is 3x6x7: inner sizes 5 and 6 differ",
                gemm_err({ 3, 4, 5 }, { 3, 6, 7 }, { 3, 4, 7 }), 1, true)
        end)

        it_gpu("a C of the wrong shape", function()
            assert.matches("gemm: C is 4x8 but A @ B is 4x7",
                gemm_err({ 4, 5 }, { 5, 7 }, { 4, 8 }), 1, true)
            assert.matches("C is 4x7 but A @ B^T is 4x6",
                gemm_err({ 4, 5 }, { 6, 5 }, { 4, 7 }, { trans_b = true }), 1, true)
        end)

        it_gpu("mixed dtypes", function()
            assert.matches("same dtype; A is f32, B is f16, C is f32",
                gemm_err({ 4, 5 }, { 5, 7 }, { 4, 7 }, nil, "f32", "f16", "f32"), 1, true)
        end)

        it_gpu("unsupported dtypes, and tf32 outside f32", function()
            assert.matches("dtype i32 is not supported",
                gemm_err({ 4, 5 }, { 5, 7 }, { 4, 7 }, nil, "i32", "i32", "i32"), 1, true)
            assert.matches("tf32 applies to f32 only",
                gemm_err({ 4, 5 }, { 5, 7 }, { 4, 7 }, { tf32 = true }, "f16", "f16", "f16"),
                1, true)
        end)

        it_gpu("1-D tensors and mixed ranks", function()
            assert.matches("A is 1-D", gemm_err({ 5 }, { 5, 7 }, { 1, 7 }), 1, true)
            assert.matches("all be 2-D or all be 3-D",
                gemm_err({ 4, 5 }, { 2, 5, 7 }, { 4, 7 }), 1, true)
        end)

        it_gpu("batch sizes that do not match", function()
            assert.matches("batch sizes differ",
                gemm_err({ 3, 4, 5 }, { 2, 5, 7 }, { 3, 4, 7 }), 1, true)
            assert.matches("batch sizes differ", -- both broadcast: the result has batch 1
                gemm_err({ 1, 4, 5 }, { 1, 5, 7 }, { 3, 4, 7 }), 1, true)
        end)

        it_gpu("an output that overlaps an input", function()
            local a = kreach.empty({ 4, 4 }, "f32")
            assert.matches("C overlaps A",
                err_of(function() kreach.cublas.gemm(a, a, kreach.empty({ 4, 4 }, "f32")) end),
                1, true)
        end)

        it_gpu("unknown or mistyped options, and non-tensors", function()
            assert.matches("unknown option 'transa' for gemm",
                gemm_err({ 4, 5 }, { 5, 7 }, { 4, 7 }, { transa = true }), 1, true)
            assert.matches("bad option 'alpha' (number expected, got string)",
                gemm_err({ 4, 5 }, { 5, 7 }, { 4, 7 }, { alpha = "2" }), 1, true)
            assert.matches("bad option 'trans_a' (boolean expected, got number)",
                gemm_err({ 4, 5 }, { 5, 7 }, { 4, 7 }, { trans_a = 1 }), 1, true)
            local c = kreach.empty({ 4, 7 }, "f32")
            assert.matches("bad argument #2",
                err_of(function() kreach.cublas.gemm(c, nil, c) end), 1, true)
        end)
    end)
end)
