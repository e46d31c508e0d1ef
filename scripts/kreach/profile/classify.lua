-- kreach.profile.classify: which family a GPU kernel belongs to, from its name. The rules are a
-- plain Lua table, tried in order: the first rule that matches decides. A kernel no rule
-- matches is *unclassified* and reported by name, never folded into a family. Which families
-- count as addressable (a custom kernel could replace them) is a separate policy table.
-- docs/profiling.md describes the rules, their order and how to add one.
local candidate = require "kreach.candidate.lua"

local M = {}

-- The families, in report order. `vendor` families are served by vendor libraries (cuBLAS,
-- cuDNN, FlashAttention, NCCL) or are not kernels at all (memory); the default policy counts
-- every other family as addressable.
M.FAMILIES = {
  { name = "gemm", vendor = true, description = "matrix products: cuBLAS/cuBLASLt (nvjet, xmma, ampere_*gemm), CUTLASS GEMMs, gemv, split-K reduce, Triton GEMM templates" },
  { name = "attention", vendor = true, description = "fused attention: FlashAttention 2/3, PyTorch flash and memory-efficient SDPA, cuDNN SDPA and its helpers, FlashInfer, paged attention" },
  { name = "conv", vendor = true, description = "convolution: cuDNN fprop/dgrad/wgrad, implicit GEMM, Winograd, FFT, the layout transforms around them, PyTorch's im2col and depthwise kernels" },
  { name = "comm", vendor = true, description = "communication: NCCL and custom all-reduce kernels" },
  { name = "memory", vendor = true, description = "memcpy and memset activity records (copy *kernels* are elementwise)" },
  { name = "elementwise", description = "pointwise kernels: PyTorch TensorIterator kernels (fills, casts and copies included), activations, RNG, concatenation, Triton pointwise" },
  { name = "reduction", description = "reductions: PyTorch reduce_kernel, cub DeviceReduce, Triton reductions" },
  { name = "normalization", description = "layer, batch, group, instance and RMS norm" },
  { name = "softmax_loss", description = "softmax, log-softmax, cross-entropy, NLL" },
  { name = "embedding", description = "EmbeddingBag and embedding backward kernels, FBGEMM table-batched embeddings" },
  { name = "index", description = "gather, scatter, index_select, index_put, KV-cache writes" },
  { name = "sort_scan", description = "sorts, top-k, prefix sums (cub radix sort, DeviceScan, cumsum)" },
  { name = "optimizer", description = "multi_tensor_apply (fused and foreach optimizers), fused Adam/SGD" },
  { name = "other", description = "known kernels of no family above (pooling, upsampling); the report lists them one by one" },
}
M.FAMILY_ORDER = {}
M.VENDOR = {}
for i, f in ipairs(M.FAMILIES) do
  M.FAMILY_ORDER[i] = f.name
  if f.vendor then M.VENDOR[f.name] = true end
end

-- A rule: { id = "...", family = "...", kernel = { lua patterns }, name = { lua patterns },
-- note = "..." }. `kernel` patterns are matched against the kernel's own function name (no
-- namespace, template arguments or parameters: "cunn_SoftMaxForward"), `name` patterns against
-- the whole demangled name with a leading "void " removed. A rule matches if any pattern does.
-- The groups, in order: communication; attention (before GEMM and convolution: FlashAttention 3
-- is a cutlass::device_kernel, cuDNN's SDPA helper convert_dq_to_16bits contains "conv");
-- convolution (before GEMM: sm80_xmma_fprop_implicit_gemm contains "gemm"); GEMM; PyTorch's
-- TensorIterator kernels (their functor must not decide: a masked_fill inside an elementwise
-- kernel is elementwise); the addressable families, specific ones first; fallbacks for other
-- cuDNN, CUTLASS and cuBLAS kernels.
M.RULES = {
  -- ---- communication
  { id = "nccl", family = "comm", kernel = { "^nccl" }, note = "NCCL collectives and send/recv (ncclDevKernel_*, ncclKernel_*)" },
  { id = "custom-allreduce", family = "comm", kernel = { "^cross_device_reduce" },
    name = { "allreduce_fusion::", "trtllm_mnnvl_allreduce::", "custom_all_reduce", "^deep_ep::" },
    note = "vLLM custom all-reduce, FlashInfer/TensorRT-LLM all-reduce fusions, DeepEP" },

  -- ---- attention
  { id = "cudnn-sdpa", family = "attention", kernel = { "^cudnn_generated_fort_native_sdpa", "sdpa_sm%d+_flash" },
    note = "cuDNN's generated SDPA kernels (cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_*)" },
  { id = "cudnn-sdpa-helpers", family = "attention",
    kernel = { "^convert_dq_to_16bits", "^compute_dot_do_o", "^fmha_reduce_head", "^qkv_tma_setup" },
    name = { "^at::cuda::philox::unpack_cudnn" },
    note = "cuDNN SDPA backward helpers, and PyTorch's dropout-seed unpacking for it; convert_dq_to_16bits must not count as a convolution" },
  { id = "flash-attention", family = "attention", kernel = { "^flash_fwd", "^flash_bwd" },
    name = { "^flash::", "^pytorch_flash::", "FlashAttn", "FlashAttention" },
    note = "FlashAttention 2 and 3 (FA3 runs as cutlass::device_kernel<flash::...>), PyTorch's flash SDPA" },
  { id = "mem-efficient-attention", family = "attention", kernel = { "^fmha_cutlass[FB]", "^attention_kernel_batched", "^fmha_" },
    name = { "MemEffAttention::Attention" }, note = "PyTorch/xformers memory-efficient attention (fmha_cutlassF_*, fmha_cutlassB_*)" },
  { id = "serving-attention", family = "attention",
    kernel = { "Prefill[Ww]ith", "Decode[Ww]ith", "^paged_attention", "merge_attn_states", "^triton_tem_fused_flex_attention" },
    note = "FlashInfer prefill/decode, vLLM paged attention, FlexAttention templates" },

  -- ---- convolution
  { id = "cudnn-xmma-conv", family = "conv", kernel = { "^sm%d+_xmma_fprop", "^sm%d+_xmma_dgrad", "^sm%d+_xmma_wgrad" },
    name = { "xmma[%w_]*_cudnn::", "cutlass[%w_]*fprop", "cutlass[%w_]*dgrad", "cutlass[%w_]*wgrad",
             "cutlass__%d+x_cudnn", "ImplicitGemmConvolution", "^cask_plugin[%w_]*_cudnn::" },
    note = "cuDNN/TensorRT implicit-GEMM convolutions (their names contain 'gemm'), cuDNN's own CUTLASS "
      .. "(cutlass__5x_cudnn::, its split-K reduction included; some of its names do not demangle) and "
      .. "its workspace set-up kernels (cask_plugin__5x_cudnn::...::init_device_workspace_kernel)" },
  { id = "cudnn-conv", family = "conv",
    kernel = { "_scudnn_", "^implicit_convolve_sgemm", "^explicit_convolve_sgemm", "^precomputed_convolve_sgemm",
               "^winograd", "^fft2d_[rc]2[rc]", "^dgrad", "^wgrad", "^conv2d_grouped_direct", "^conv_depthwise",
               "[Nn]chwToNhwc", "[Nn]hwcToNchw", "^nhwcAddPadding", "^nchwAddPadding", "^nhwcRemovePadding",
               "^nchwRemovePadding", "^im2col", "^col2im", "^vol2col", "^col2vol", "^slow_conv" },
    name = { "winograd_nonfused::" },
    note = "cuDNN SIMT, Winograd and FFT convolutions, their layout transforms; PyTorch im2col and depthwise convolution" },

  -- ---- GEMM
  { id = "cublas-gemm", family = "gemm",
    kernel = { "^nvjet_", "^sm%d+_xmma_gemm", "^ampere_[%w_]*gemm", "^hopper_[%w_]*gemm", "^volta_[%w_]*gemm",
               "^turing_[%w_]*gemm", "^maxwell_[%w_]*gemm", "^kepler_[%w_]*gemm", "^sm%d+_gemm", "^[sdhcz]gemm_" },
    note = "cuBLAS/cuBLASLt: nvJet (Hopper and later), xmma, per-architecture SASS GEMMs, generic ones (sgemm_largek_lds64)" },
  { id = "cublas-gemv", family = "gemm",
    kernel = { "^gemv", "^gemmk1_kernel", "^gemmSN_", "^splitKreduce_kernel", "^dot_kernel$", "^reduce_1Block_kernel$" },
    name = { "^gemvx::", "internal::gemvx::", "^cublasLt::splitKreduce", "^scal_kernel<[^>]*>%(cublas",
             "^axpy_kernel<[^>]*>%(cublas" },
    note = "cuBLAS gemv, gemmk1, small-N GEMM, split-K reduction, dot, and BLAS-1 scal/axpy (their parameters name cuBLAS)" },
  { id = "cutlass-gemm", family = "gemm", name = { "cutlass[%w_]*gemm", "cutlass::gemm::" },
    note = "CUTLASS 2 and 3 GEMMs (cutlass_80_tensorop_*gemm*, cutlass3x_sm90_*gemm*)" },
  { id = "triton-gemm", family = "gemm", kernel = { "^triton_tem_fused_[%w_]*mm", "^fused_moe_kernel" },
    name = { "scaled_mm" }, note = "Inductor GEMM templates, Triton MoE expert GEMMs, CUTLASS scaled_mm" },

  -- ---- PyTorch TensorIterator kernels: the kernel, not its functor, decides
  { id = "torch-elementwise", family = "elementwise",
    kernel = { "^vectorized_elementwise_kernel$", "^unrolled_elementwise_kernel$", "^elementwise_kernel$",
               "^unrolled_elementwise_kernel_for_multi_outputs$",
               "^elementwise_kernel_with_index$", "^vectorized_templated_elementwise_kernel$" },
    note = "TensorIterator pointwise kernels: arithmetic, activations, fills, casts, copies" },
  { id = "torch-reduce", family = "reduction", kernel = { "^reduce_kernel$" }, note = "TensorIterator reductions (sum, mean, argmax, norms)" },
  { id = "torch-index", family = "index", kernel = { "^index_elementwise_kernel$" }, note = "TensorIterator indexing (x[idx], index_put_)" },

  -- ---- the addressable families
  { id = "optimizer", family = "optimizer",
    kernel = { "^multi_tensor_apply_kernel$", "[Ff]used[Aa]dam", "^Apply[%w]*Adam", "^ApplyGradientDescent" },
    note = "multi_tensor_apply: fused and foreach optimizers (foreach arithmetic included), TensorFlow Apply* kernels" },
  { id = "embedding", family = "embedding",
    kernel = { "^EmbeddingBag_", "^embedding_bag", "^embedding_backward", "^krn_partial", "^compute_grad_weight",
               "^sum_and_scatter", "^compute_num_of_partial_segments", "^split_embedding", "^batched_embedding",
               "^bounds_check_indices" },
    note = "PyTorch EmbeddingBag and embedding backward, FBGEMM table-batched embeddings (embedding forward is index_select: index)" },
  { id = "normalization", family = "normalization",
    kernel = { "layer_norm", "LayerNorm", "rms_norm", "RMSNorm", "RmsNorm", "group_norm", "GroupNorm", "batch_norm",
               "BatchNorm", "instance_norm", "InstanceNorm", "^bn_fw", "^bn_bw", "^RowwiseMoments", "^ComputeFusedParams",
               "^GammaBetaBackward", "^cuComputePartGradGammaBeta", "^cuComputeGradGammaBeta", "^cuComputeGradInput" },
    note = "layer/batch/group/instance/RMS norm from PyTorch, apex, vLLM, cuDNN, Inductor" },
  { id = "softmax-loss", family = "softmax_loss",
    kernel = { "[Ss]oft[Mm]ax", "nll_loss", "cross_entropy", "CrossEntropy" },
    note = "softmax and log-softmax (cunn_SoftMax*, softmax_warp_*), NLL and cross-entropy" },
  { id = "sort-scan", family = "sort_scan",
    kernel = { "RadixSort", "DeviceScan", "DeviceSelect", "DeviceUnique", "DeviceCompact", "DeviceSegmentedSort",
               "DeviceMergeSort", "[Bb]itonicSort", "sortKeyValueInplace", "radixSort", "radixFindKthValues",
               "gatherTopK", "^tensor_kernel_scan", "cumsum", "cumprod" },
    note = "cub sorts, scans and selections, PyTorch sort/top-k/cumsum (before index: gatherTopK is a top-k)" },
  { id = "index", family = "index",
    kernel = { "^index", "[Ii]ndexSelect", "indexing_backward", "index_put", "scatter", "gather", "^take_", "^put_",
               "reshape_and_cache", "concat_and_cache" },
    note = "gather/scatter/index_select/index_put, vLLM KV-cache writes (reshape_and_cache_flash is not attention)" },
  { id = "reduction", family = "reduction", kernel = { "DeviceReduce", "DeviceSegmentedReduce", "^triton_red_", "^triton_per_" },
    note = "cub reductions, Inductor reductions (a Triton kernel named for a norm or softmax matched above)" },
  { id = "elementwise", family = "elementwise",
    kernel = { "^distribution_elementwise", "^CatArrayBatchedCopy", "^triton_poi_", "[Rr]otary", "_and_mul_kernel",
               "[Dd]ropout", "^split_with_sizes_copy", "^bfloat16_copy_kernel", "^direct_copy_kernel" },
    note = "RNG, concatenation and copy kernels, activations and rotary embeddings outside TensorIterator, Inductor pointwise" },
  { id = "other", family = "other",
    kernel = { "[Pp]ool", "^upsample", "[Ii]nterpolat", "^grid_sampler" },
    note = "pooling, upsampling and grid sampling: no family of their own" },

  -- ---- fallbacks for the vendors' remaining kernels
  { id = "cudnn-other", family = "conv", name = { "^cudnn::" }, note = "other cuDNN kernels (norm, softmax and pooling ones matched above)" },
  { id = "cutlass-other", family = "gemm", name = { "^cutlass::", "^cutlass_" }, note = "other CUTLASS kernels (attention and convolution ones matched above)" },
  { id = "cublas-other", family = "gemm", name = { "^cublas" }, note = "other cuBLAS kernels (epilogues)" },
}

-- ---- names ----

-- The demangled name without a leading "void ", with nsys's "<unnamed>" spelled as CUPTI's
-- "(anonymous namespace)".
function M.normalize(name)
  name = name:gsub("^%s+", ""):gsub("^void ", "")
  name = name:gsub("<unnamed>", "(anonymous namespace)")
  return name
end

-- The kernel's own function name: "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4,
-- float>(float*)" -> "cunn_SoftMaxForward". Returns the whole name when it has no structure
-- (extern "C" kernels, mangled names).
function M.kernel_name(name)
  local s = M.normalize(name):gsub("%(anonymous namespace%)", "{anonymous}")
  local cut = s:find("[<(]")
  if cut then s = s:sub(1, cut - 1) end
  s = s:gsub("%s+$", "")
  return s:match("([^:]+)$") or s
end

-- ---- classifiers ----

-- pattern_error(p) -> why Lua pattern p is malformed, or nil. Lua reads a pattern only as far as
-- a match gets (string.find("", "v[") does not fail), so a rule's pattern is read whole here:
-- a '%' at the end, a set without its ']', %b without its two characters, %f without a set,
-- captures that do not balance.
M.MAX_REPETITIONS = 4
local function pattern_error(p)
  local i, n, depth = 1, #p, 0
  while i <= n do
    local c = p:sub(i, i)
    if c == "%" then
      local d = p:sub(i + 1, i + 1)
      if d == "" then return "it ends with '%'" end
      if d == "b" then
        if i + 3 > n then return "'%b' needs two characters" end
        i = i + 4
      elseif d == "f" then
        if p:sub(i + 2, i + 2) ~= "[" then return "'%f' needs a set ('[...]')" end
        i = i + 2
      else
        i = i + 2
      end
    elseif c == "[" then
      local j = i + 1
      if p:sub(j, j) == "^" then j = j + 1 end
      if p:sub(j, j) == "]" then j = j + 1 end -- a ']' first is itself
      while true do
        if j > n then return "a set without its ']'" end
        local e = p:sub(j, j)
        if e == "%" then j = j + 2 elseif e == "]" then break else j = j + 1 end
      end
      i = j + 1
    elseif c == "(" then
      depth, i = depth + 1, i + 1
    elseif c == ")" then
      depth, i = depth - 1, i + 1
      if depth < 0 then return "a ')' without its '('" end
    else
      i = i + 1
    end
  end
  if depth > 0 then return "a '(' without its ')'" end
  -- backtracking over a long kernel name costs about n^(q+1) for q repetitions (a
  -- back-reference, %1..%9, counts as one: it compares its whole capture again)
  local q, _, backrefs = candidate.pattern_repetitions(p)
  if q > M.MAX_REPETITIONS then
    return ("%d repetitions%s, more than %d: matching it against a long kernel name could take hours"):format(q,
      backrefs > 0 and (" (%d of them back-references, which count as repetitions)"):format(backrefs) or "", M.MAX_REPETITIONS)
  end
  return nil
end

local function check_rules(rules)
  if type(rules) ~= "table" then error("rules: table expected, got " .. type(rules), 3) end
  for i, r in ipairs(rules) do
    local where = ("rule %d%s"):format(i, type(r) == "table" and r.id and (" ('" .. tostring(r.id) .. "')") or "")
    if type(r) ~= "table" then error(where .. ": table expected", 3) end
    for k in pairs(r) do
      if k ~= "id" and k ~= "family" and k ~= "kernel" and k ~= "name" and k ~= "note" then
        error(("%s: unknown field '%s'"):format(where, tostring(k)), 3)
      end
    end
    if type(r.family) ~= "string" or r.family == "" then error(where .. ": 'family' must be a string", 3) end
    if r.kernel == nil and r.name == nil then error(where .. ": needs 'kernel' or 'name' patterns", 3) end
    for _, field in ipairs({ "kernel", "name" }) do
      local ps = r[field]
      if ps ~= nil then
        if type(ps) ~= "table" then error(("%s: '%s' must be a list of patterns"):format(where, field), 3) end
        for _, p in ipairs(ps) do
          local why = type(p) ~= "string" and "not a string" or pattern_error(p)
          if why then
            error(("%s: '%s' has a bad pattern %s (%s)"):format(where, field, tostring(p), why), 3)
          end
        end
      end
    end
  end
  return rules
end
M.check = function(rules) return check_rules(rules) end

local Classifier = {}
Classifier.__index = Classifier

-- new(rules) -> a classifier over `rules` (default M.RULES), caching by name. Raises on a
-- malformed rule.
function M.new(rules)
  rules = check_rules(rules or M.RULES)
  return setmetatable({ rules = rules, cache = {} }, Classifier)
end

-- c:classify(name) -> family, rule (the rule table), or nil when no rule matches.
function Classifier:classify(name)
  local hit = self.cache[name]
  if hit == nil then
    hit = false
    local full = M.normalize(name)
    local kname = M.kernel_name(name)
    for _, r in ipairs(self.rules) do
      local found = false
      for _, p in ipairs(r.kernel or {}) do
        if kname:find(p) then found = true; break end
      end
      if not found then
        for _, p in ipairs(r.name or {}) do
          if full:find(p) then found = true; break end
        end
      end
      if found then hit = r; break end
    end
    self.cache[name] = hit
  end
  if hit then return hit.family, hit end
  return nil
end

-- The families a classifier can produce, in report order: the known ones, then any new family
-- its rules introduce.
function Classifier:families()
  local seen, out = {}, {}
  for _, f in ipairs(M.FAMILY_ORDER) do seen[f] = true; out[#out + 1] = f end
  for _, r in ipairs(self.rules) do
    if not seen[r.family] then seen[r.family] = true; out[#out + 1] = r.family end
  end
  return out
end

local default
-- classify(name[, rules]) -> family, rule, or nil: one name with the default rules or `rules`.
function M.classify(name, rules)
  if rules then return M.new(rules):classify(name) end
  default = default or M.new()
  return default:classify(name)
end

-- extend(extra[, base]) -> a new rules list: `extra` first (so it wins), then `base` (default
-- M.RULES).
function M.extend(extra, base)
  local out = {}
  for _, r in ipairs(check_rules(extra)) do out[#out + 1] = r end
  for _, r in ipairs(base or M.RULES) do out[#out + 1] = r end
  return out
end

-- load(path) -> rules, or nil and why: a Lua file returning a list of rules, prepended to the
-- defaults, or { replace = true, ... } to use its rules alone.
-- load(path): at most this many Lua instructions to run a rules file
M.LOAD_STEPS = 10000000

function M.load(path)
  -- an error message that names the file (a syntax error, a line that raised) as it is
  local function named(msg)
    msg = tostring(msg)
    return msg:find(path, 1, true) and msg or ("%s: %s"):format(path, msg)
  end
  local chunk, err = loadfile(path, "t", {})
  if not chunk then return nil, named(err) end
  -- under the candidate sandbox's step limit (a rules file is data: one that loops is a mistake)
  local ok, t = candidate.run_limited(M.LOAD_STEPS, "@" .. path, chunk)
  if not ok then return nil, named(t) end
  if type(t) ~= "table" then return nil, ("%s: the file must return a list of rules"):format(path) end
  local list = {}
  for i, r in ipairs(t) do list[i] = r end
  local okc, res = pcall(function() return t.replace and check_rules(list) or M.extend(list) end)
  if not okc then return nil, ("%s: %s"):format(path, tostring(res):gsub("^[^:]*:%d+: ", "")) end
  return res
end

-- ---- the addressable policy ----

-- The default policy: every family that is not a vendor's is addressable.
M.ADDRESSABLE = {}
for _, f in ipairs(M.FAMILIES) do M.ADDRESSABLE[f.name] = not f.vendor end

-- addressable(family[, policy]) -> boolean. A policy is { family = true|false }; a family it
-- does not name falls back to the default (families new to the rules are addressable).
function M.addressable(family, policy)
  if policy and policy[family] ~= nil then return policy[family] and true or false end
  if M.ADDRESSABLE[family] ~= nil then return M.ADDRESSABLE[family] end
  return not M.VENDOR[family]
end

return M
