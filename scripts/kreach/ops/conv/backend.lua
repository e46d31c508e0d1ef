-- kreach.ops.conv.backend: which implementation computes a convolution's baseline (cuDNN
-- where kreach.cudnn finds it, else the NVRTC kernels of kreach.ops.conv), and the call through
-- cuDNN, with the engine selection PyTorch's own dispatch implies.
local cudnn = require "kreach.cudnn"
local kinds = require "kreach.kinds"

local M = {}

-- The one place that says which implementation computes the baseline at a dtype: cuDNN where
-- kreach.cudnn finds it (f32 with TF32 off, bf16 and f16 with fp32 accumulation; the fastest
-- algorithm by cuDNN's heuristics), else the NVRTC kernels here. f64 is the oracle, always these
-- kernels. KREACH_CONV_BACKEND=nvrtc keeps the NVRTC kernels where cuDNN is there.
local CUDNN_DTYPES = kinds.set(kinds.DTYPES) -- every dtype a problem runs at
function M.choose_backend(dtype)
  if not CUDNN_DTYPES[dtype] or os.getenv("KREACH_CONV_BACKEND") == "nvrtc" then return "nvrtc" end
  return cudnn.available() and "cudnn" or "nvrtc"
end

local INT32_MAX = 2147483647

-- cuDNN's version as text, asked once (conv_last carries it on every call, timed ones too)
local version_text
function M.version()
  if not version_text then version_text = cudnn.info().version end
  return version_text
end

-- Runs one call through cuDNN: true and its algorithm, or false and why cuDNN does not take it
-- (then the NVRTC kernels do, and lib.conv_last says so). cuDNN's descriptors count elements
-- in 32 bits: a call whose x or y is larger runs as slices of the batch (as PyTorch's own cuDNN
-- path does), and one whose single sample or weight is larger goes to the NVRTC kernels. A shape
-- cuDNN refuses (its BAD_PARAM or NOT_SUPPORTED, before any work) does too; any other failure
-- is raised.
function M.run(g, transposed, x, w, y, bias)
  local per_x, per_y = x:numel() // g.N, y:numel() // g.N
  if w:numel() > INT32_MAX or per_x > INT32_MAX or per_y > INT32_MAX then
    return false, "a sample or the weight has more than 2^31 - 1 elements"
  end
  local chunk = math.min(g.N, math.max(1, INT32_MAX // math.max(per_x, per_y)))
  local o = { transposed = transposed, stride = g.stride, padding = g.pad, dilation = g.dilation,
              groups = g.groups, bias = bias, output_padding = transposed and g.output_padding or nil,
              select = M.cudnn_select(g, transposed, x.dtype) }
  local algo
  for s = 1, g.N, chunk do
    local n = math.min(chunk, g.N - s + 1)
    local xs, ys = x, y
    if n < g.N then xs, ys = x:narrow(1, s, n), y:narrow(1, s, n) end
    local ok, r = pcall(cudnn.conv, xs, w, ys, o)
    if not ok then
      local msg = tostring(r)
      if s == 1 and (msg:find("CUDNN_STATUS_BAD_PARAM", 1, true) or msg:find("CUDNN_STATUS_NOT_SUPPORTED", 1, true)) then
        return false, msg
      end
      error(r, 0)
    end
    algo = r
  end
  return true, algo
end

-- PyTorch eager does not call cuDNN for a depthwise convolution (not transposed, 1-D to 3-D, a
-- 1-D one viewed as 2-D; groups = input channels > 1, output channels a multiple of them) at f32 or bf16: aten's
-- _select_conv_backend sends it to its own CudaDepthwise2d/3d kernels (cuDNN takes depthwise
-- convolutions there only at f16, under conditions on the shape). There is then no engine of
-- PyTorch's to copy, and the first in cuDNN's heuristics' order can be far from PyTorch's
-- kernel (problem 83 at f32 on the H200: 4.4 times slower): the fastest engine, timed, runs.
function M.pytorch_depthwise_native(g, transposed, dtype)
  return not transposed and g.groups > 1 and g.groups == g.C
    and g.Co % g.C == 0 and dtype ~= "f16"
end

-- The engine selection for one cuDNN call: kreach.cudnn.selection() ("pytorch" unless
-- KREACH_CUDNN_SELECT says otherwise), except "fastest" where PyTorch runs its own kernel.
function M.cudnn_select(g, transposed, dtype)
  local sel = cudnn.selection()
  if sel == "pytorch" and M.pytorch_depthwise_native(g, transposed, dtype) then return "fastest" end
  return sel
end

-- Whether cuDNN can take this call as PyTorch states it (else the NVRTC kernels do): batched,
-- padding the same on both sides, no kernel forced by opts.algo.
function M.takes(g)
  if not g.batched or (g.algo and g.algo ~= "auto") then return false end
  for d = 1, g.n do if g.pad[d] ~= g.pad_right[d] then return false end end
  return true
end

return M
