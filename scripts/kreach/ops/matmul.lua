-- kreach.ops.matmul: matrix products through cuBLAS (row-major, TF32 off; f16 and bf16
-- accumulate in fp32; f64 is DGEMM, the oracle). Shapes follow torch.matmul for the cases the
-- suites use: 2-D @ 2-D, batched 3-D @ 3-D, and N-D @ 2-D (the leading dimensions of A are
-- flattened into rows, which is exact for contiguous tensors).
local function install(lib, K)
  -- c = op(a) @ op(b); opts: trans_a, trans_b (the last two dimensions), alpha, beta
  function lib.matmul(a, b, c, opts)
    local op = "matmul"
    opts = opts or {}
    K.check_float(op, a, "A")
    K.check_float(op, b, "B")
    K.check_float(op, c, "C")
    K.check_dtype(op, b, a.dtype, "B")
    K.check_dtype(op, c, a.dtype, "C")
    local ta, tb = opts.trans_a or false, opts.trans_b or false
    local da, db = a:dim(), b:dim()
    if da < 2 or db < 2 then
      K.fail(op, "A is %s and B is %s: both need at least 2 dimensions", K.shape_str(a.shape),
        K.shape_str(b.shape))
    end
    local as, bs = a.shape, b.shape
    local m, ka = as[da - 1], as[da]
    if ta then m, ka = ka, m end
    local kb, n = bs[db - 1], bs[db]
    if tb then kb, n = n, kb end
    if ka ~= kb then
      K.fail(op, "A%s is %s and B%s is %s: inner sizes %d and %d differ", ta and "^T" or "",
        K.shape_str(as), tb and "^T" or "", K.shape_str(bs), ka, kb)
    end
    local want
    local A, B, C = a, b, c
    if db == 2 then
      -- N-D @ 2-D: rows of A's leading dimensions times B
      want = {}
      for i = 1, da - 2 do want[i] = as[i] end
      want[#want + 1] = m
      want[#want + 1] = n
      if da > 2 then
        if ta then K.fail(op, "trans_a with a %d-D A is not supported", da) end
        local rows = a:numel() // ka
        A = a:view(rows, ka)
        K.check_shape(op, c, want, "C")
        C = c:view(rows, n)
      end
    elseif da == 3 and db == 3 then
      if as[1] ~= bs[1] then
        K.fail(op, "A is %s and B is %s: batch sizes differ", K.shape_str(as), K.shape_str(bs))
      end
      want = { as[1], m, n }
    else
      K.fail(op, "A is %s and B is %s: supported are 2-D, batched 3-D, and N-D @ 2-D",
        K.shape_str(as), K.shape_str(bs))
    end
    K.check_shape(op, c, want, "C")
    if not K.writes(c) then return c end
    require("kreach").cublas.gemm(C, A, B, { trans_a = ta, trans_b = tb, alpha = opts.alpha,
                                            beta = opts.beta })
    return c
  end
end

return { install = install, sources = {} }
