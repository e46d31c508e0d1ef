-- experiments/dlrm/project.lua without a GPU, on a trace written here with the kernel sequence of
-- PyTorch 2.11's eager DLRM step (names and order as the H200 traces have them, the times
-- made up): each DLRM-Bench problem gets its kernels by position, Amdahl's law gives the step's
-- speedup on GPU time, and a trace without the anchors says which problem lost them.
local support = require "support"
local cjson = require "cjson"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local root = here .. "/../.."
local KREACH = require("kreach").executable()

-- one step: { name, microseconds, grid }
local function step_kernels()
  local ks = {}
  local function k(name, us, grid) ks[#ks + 1] = { name, us, grid or { 8, 1, 1 } } end
  k("sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>(float*)", 5)               -- bottom MLP
  k("vectorized_elementwise_kernel<4, launch_clamp_scalar>(int)", 1)
  for _ = 1, 26 do k("void at::native::EmbeddingBag_updateOutputKernel_sum_mean<float, long>(long const*)", 2) end
  k("CatArrayBatchedCopy_vectorized<OpaqueType<4u>, unsigned int, 2, 128, 1, 16, 4>(char*)", 1)
  k("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3", 3, { 1, 1, 128 }) -- bmm
  k("index_elementwise_kernel<128, 4>(long)", 1)
  k("CatArrayBatchedCopy_alignedK_contig<OpaqueType<4u>, unsigned int, 2, 128, 1, 16>(OpaqueType<4u>*)", 1)
  k("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x64x8_stage3", 10)                -- top MLP
  k("vectorized_elementwise_kernel<4, launch_clamp_scalar>(int)", 1)
  k("elementwise_kernel<128, 2, gpu_kernel_impl_nocast<direct_copy_kernel_cuda>>(int)", 1) -- head
  k("internal::gemvx::kernel<int, int, float>(float)", 2)
  k("vectorized_elementwise_kernel<4, sigmoid_kernel_cuda>(int)", 1)
  k("vectorized_elementwise_kernel<4, binary_cross_entropy_out_cuda>(int)", 1)
  k("reduce_kernel<512, 1, ReduceOp<float, MeanOps<float, float, float, float>>>(int)", 1)
  k("vectorized_elementwise_kernel<4, FillFunctor<float>>(int)", 1, { 1, 1, 1 })
  k("elementwise_kernel<128, 2, binary_cross_entropy_backward>(int)", 1)
  k("vectorized_elementwise_kernel<4, BUnaryFunctor<MulFunctor<float>>>(int)", 1)
  k("vectorized_elementwise_kernel<4, sigmoid_backward_kernel_cuda>(int)", 1)
  k("cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(Params)", 2)
  k("gemvNSP_kernel<float, float>(float)", 2)
  k("reduce_kernel<512, 1, ReduceOp<float, sum_functor<float>>>(int)", 1)
  k("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3", 10)                 -- top MLP grads
  k("vectorized_elementwise_kernel<4, FillFunctor<float>>(int)", 1, { 92, 1, 1 })       -- dz's zeros
  k("cub::detail::radix_sort::DeviceRadixSortSingleTileKernel<long>(long)", 2)
  k("indexing_backward_kernel_stride_1<float>(long const*)", 4, { 88, 1, 128 })
  k("sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize128x32x8_stage3", 3, { 1, 1, 128 })
  k("elementwise_kernel<128, 2, gpu_kernel_impl_nocast<CUDAFunctor_add<float>>>(int)", 1)
  for _ = 1, 26 do k("vectorized_gather_kernel<16, long>(char*, char*, long*)", 1) end
  k("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3", 5)                  -- bottom MLP grads
  for _ = 1, 26 do k("indexFuncLargeIndex<float, long, unsigned int, 2, 2, -2, true, ReduceAdd>(TensorInfo)", 2) end
  k("vectorized_elementwise_kernel<4, CUDAFunctor_add<float>>(int)", 3)
  return ks
end

local function write_trace(path, steps, drop)
  local lines = { '{"type":"header","version":1,"pid":1,"cupti_version":26,"start_ns":1000}' }
  local t, n = 100000, 0
  for _ = 1, steps do
    local s0 = t
    for _, k in ipairs(step_kernels()) do
      if not (drop and k[1]:find(drop, 1, true)) then
        n = n + 1
        lines[#lines + 1] = cjson.encode({ type = "kernel", name = k[1], mangled = k[1], start = t, ["end"] = t + k[2] * 1000,
          device = 0, context = 1, stream = 7, grid = k[3], block = { 256, 1, 1 }, registers = 32, static_shared = 0,
          dynamic_shared = 0, correlation = n })
        t = t + k[2] * 1000
      end
    end
    lines[#lines + 1] = cjson.encode({ type = "range", name = "step", start = s0 - 10, ["end"] = t + 10 })
    t = t + 50000
  end
  lines[#lines + 1] = cjson.encode({ type = "footer", kernels = n, memcpys = 0, memsets = 0, ranges = steps, dropped = 0,
    buffers = 1, end_ns = t })
  support.spit(path, table.concat(lines, "\n") .. "\n")
end

local function project(trace, extra)
  local dir = support.tmpdir()
  local out, rc = support.sh(("%q %q --config kaggle --trace kaggle=%q --speedups 1=2,7=0.5,5=4 --json %q %s"):format(
    KREACH, root .. "/experiments/dlrm/project.lua", trace, dir .. "/p.json", extra or ""))
  return out, rc, rc == 0 and cjson.decode(support.slurp(dir .. "/p.json")) or nil
end

describe("experiments/dlrm/project.lua", function()
  it("gives each problem its kernels by position and projects with Amdahl's law", function()
    local dir = support.tmpdir()
    write_trace(dir .. "/t.jsonl", 2)
    local out, rc, j = project(dir .. "/t.jsonl")
    assert.equals(0, rc, out)
    local p = j.projections[1]
    assert.equals(2, p.steps)
    local by = {}
    for _, r in ipairs(p.problems) do by[r.problem] = r end
    -- kernels a step and microseconds a step, from the sequence above
    local want = { [10] = { 2, 6 }, [1] = { 26, 52 }, [7] = { 4, 6 }, [11] = { 12, 15 }, [8] = { 5, 11 },
                   [5] = { 26, 26 }, [6] = { 26, 52 } }
    for id, w in pairs(want) do
      assert.equals(w[1], by[id].kernels, "kernels of problem " .. id)
      assert.is_true(math.abs(by[id].ms_per_step * 1e3 - w[2]) < 1e-6, ("problem %d: %g us"):format(id, by[id].ms_per_step * 1e3))
    end
    -- GPU time a step: every kernel above
    local total = 0
    for _, k in ipairs(step_kernels()) do total = total + k[2] end
    assert.is_true(math.abs(p.gpu_ms_per_step * 1e3 - total) < 1e-6)
    -- Amdahl: S = 1 / ((1 - f) + sum f / s) over 1 (x2), 7 (x0.5), 5 (x4)
    local f1, f7, f5 = 52 / total, 6 / total, 26 / total
    local S = 1 / ((1 - f1 - f7 - f5) + f1 / 2 + f7 / 0.5 + f5 / 4)
    assert.is_true(math.abs(p.gpu.S - S) < 1e-9, ("S %.9f, expected %.9f"):format(p.gpu.S, S))
    assert.equals(0, #p.missing)
    assert.truthy(out:find("8_DotInteraction_backward", 1, true))
  end)

  it("says which problem lost its anchors", function()
    local dir = support.tmpdir()
    write_trace(dir .. "/t.jsonl", 2, "sigmoid_backward")
    local out, rc, j = project(dir .. "/t.jsonl")
    assert.equals(0, rc, out)
    local miss = {}
    for _, m in ipairs(j.projections[1].missing) do miss[m.problem] = m.why end
    assert.truthy(miss[11] and miss[11]:find("sigmoid_backward", 1, true), out)
    assert.truthy(out:find("problem 11: a step of this trace lacks the table's anchors", 1, true), out)
  end)

  it("refuses a bad --speedups and a missing results database", function()
    local dir = support.tmpdir()
    write_trace(dir .. "/t.jsonl", 1)
    local out, rc = support.sh(("%q %q --trace kaggle=%q --config kaggle --speedups 1=fast"):format(KREACH,
      root .. "/experiments/dlrm/project.lua", dir .. "/t.jsonl"))
    assert.equals(2, rc)
    assert.truthy(out:find("--speedups: '1=fast' is not ID=SPEEDUP", 1, true), out)
    out, rc = support.sh(("%q %q --trace kaggle=%q --config kaggle --results %q"):format(KREACH,
      root .. "/experiments/dlrm/project.lua", dir .. "/t.jsonl", dir .. "/none.db"))
    assert.equals(2, rc)
    assert.truthy(out:find("none.db does not exist", 1, true), out)
  end)
end)
