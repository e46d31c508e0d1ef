-- kreach.profile.classify: every real kernel name of tests/data/profile/kernel_names.tsv gets
-- its family; the rules' order (first match wins) and the traps it exists for; a user's rules
-- before the defaults; rules from a file; the addressable policy.
local support = require "support"
local classify = require "kreach.profile.classify"

local LIST = "tests/data/profile/kernel_names.tsv"

local function rows()
  local out = {}
  local n = 0
  for line in io.lines(LIST) do
    n = n + 1
    if line ~= "" and not line:match("^#") then
      local name, family, note = line:match("^([^\t]+)\t([^\t]+)\t([^\t]*)$")
      assert(name, ("%s:%d: expected name TAB family TAB note"):format(LIST, n))
      out[#out + 1] = { name = name, family = family, note = note, line = n }
    end
  end
  return out
end

local function tmpfile(text)
  local p = support.tmpfile()
  local f = assert(io.open(p, "w"))
  f:write(text)
  f:close()
  return p
end

describe("kreach.profile.classify", function()
  it("classifies every name of the committed list as the list says", function()
    local list = rows()
    assert.is_true(#list >= 80, "the list has " .. #list .. " names")
    local wrong = {}
    for _, r in ipairs(list) do
      local fam, rule = classify.classify(r.name)
      if (fam or "unclassified") ~= r.family then
        wrong[#wrong + 1] = ("%s:%d: %s: expected %s, got %s (rule %s)"):format(LIST, r.line, r.name:sub(1, 100),
          r.family, tostring(fam), rule and rule.id or "none")
      end
    end
    assert.same({}, wrong)
  end)

  it("has Hopper and A100 names, and names of every family but memory (which is not kernels)", function()
    local hopper, ampere, seen = 0, 0, {}
    for _, r in ipairs(rows()) do
      if r.note:find("H100") or r.note:find("H200") then hopper = hopper + 1 end
      if r.note:find("A100") then ampere = ampere + 1 end
      seen[r.family] = (seen[r.family] or 0) + 1
    end
    assert.is_true(hopper >= 10, "Hopper names: " .. hopper)
    assert.is_true(ampere >= 10, "A100 names: " .. ampere)
    for _, f in ipairs(classify.FAMILY_ORDER) do
      if f ~= "memory" then assert.is_true((seen[f] or 0) >= 2, "names of family " .. f) end
    end
    assert.is_true((seen.unclassified or 0) >= 1)
  end)

  it("finds a kernel's own function name under namespaces, templates and parameters", function()
    assert.equals("cunn_SoftMaxForward", classify.kernel_name(
      "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float, at::native::(anonymous namespace)::SoftMaxForwardEpilogue>(float*, float const*, int)"))
    assert.equals("cunn_SoftMaxForward", classify.kernel_name("void at::native::<unnamed>::cunn_SoftMaxForward<(int)8, c10::BFloat16>(T4 *, const T2 *, int)"))
    assert.equals("device_kernel", classify.kernel_name("void cutlass::device_kernel<flash::FlashAttnFwdSm90<...>>(...)"))
    assert.equals("ncclDevKernel_AllReduce_Sum_bf16_RING_LL", classify.kernel_name("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)"))
    assert.equals("nvjet_tst_64x8_64x16_4x1_v_bz_TNT", classify.kernel_name("nvjet_tst_64x8_64x16_4x1_v_bz_TNT"))
    assert.equals("softmax_warp_forward", classify.kernel_name("void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>(float*)"))
  end)

  it("tries the rules in order: the first that matches decides", function()
    -- the traps the default order exists for
    local function fam(name) return (classify.classify(name)) end
    assert.equals("attention", fam("void cudnn::fusion::convert_dq_to_16bits<true>(void const*, void*, int)")) -- not conv
    assert.equals("gemm", fam("nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NTT"))                                 -- no "gemm" in it
    assert.equals("conv", fam("sm80_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_stage4_warpsize2x2x1_g1_tensor16x8x16")) -- "gemm" in a convolution
    assert.equals("attention", fam("void cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<int>>>(int)")) -- a cutlass kernel
    assert.equals("index", fam("void vllm::reshape_and_cache_flash_kernel<__nv_bfloat16>(long const*)"))     -- "flash", not attention
    assert.equals("elementwise", fam("void vllm::rotary_embedding_kernel<c10::BFloat16, true>(long const*)")) -- "embedding", not embedding
    assert.equals("sort_scan", fam("void at::native::sbtopk::gatherTopK<float, unsigned int, 2, false>(int)")) -- "gather", a top-k
    assert.equals("index", fam("void at::native::_scatter_gather_elementwise_kernel<128, 4, int>(int)"))      -- "elementwise_kernel" in its name
    assert.equals("reduction", fam("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, at::native::NormTwoOps<float, float, float>, unsigned int, float, 4> >(int)"))
    -- the same two rules in the other order give the other answer
    local conv_first = { { id = "c", family = "conv", name = { "conv" } }, { id = "a", family = "attention", kernel = { "dq" } } }
    local attn_first = { conv_first[2], conv_first[1] }
    local name = "void cudnn::fusion::convert_dq_to_16bits<true>(void const*)"
    assert.equals("conv", (classify.classify(name, conv_first)))
    assert.equals("attention", (classify.classify(name, attn_first)))
    local _, rule = classify.classify(name)
    assert.equals("cudnn-sdpa-helpers", rule.id)
  end)

  it("leaves a name no rule matches unclassified", function()
    assert.is_nil(classify.classify("my_fused_rope_kernel_v2"))
    assert.is_nil(classify.classify("_fwd_kernel_stage2"))
  end)

  it("lets a user's rules come before the defaults, which still apply after them", function()
    local rules = classify.extend({
      { id = "mine", family = "attention", kernel = { "^my_attention" } },
      { id = "nvjet-is-mine", family = "other", kernel = { "^nvjet_" } },
      { id = "moe", family = "moe", kernel = { "^moe_align" } },
    })
    local c = classify.new(rules)
    assert.equals("attention", (c:classify("my_attention_fwd(float*, int)")))
    assert.equals("other", (c:classify("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT")))
    assert.equals("gemm", (c:classify("ampere_sgemm_128x64_tn")))
    assert.equals("moe", (c:classify("void moe_align_block_size_kernel<int>(int)")))
    local fams = c:families()
    assert.equals("moe", fams[#fams])                 -- a new family goes after the known ones
    assert.is_true(classify.addressable("moe"))       -- and is addressable by default
    -- the default list itself is unchanged
    assert.equals("gemm", (classify.classify("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT")))
  end)

  it("loads rules from a Lua file: prepended, or alone with replace = true", function()
    local p = tmpfile([[return { { id = "x", family = "softmax_loss", kernel = { "^my_xent" } } }]])
    local rules = assert(classify.load(p))
    assert.equals("softmax_loss", (classify.classify("my_xent_fwd", rules)))
    assert.equals("gemm", (classify.classify("ampere_sgemm_128x64_tn", rules)))
    os.remove(p)
    p = tmpfile([[return { replace = true, { id = "all", family = "other", name = { "." } } }]])
    rules = assert(classify.load(p))
    assert.equals(1, #rules)
    assert.equals("other", (classify.classify("ampere_sgemm_128x64_tn", rules)))
    os.remove(p)
    p = tmpfile([[return { { id = "bad", family = "gemm", kernel = { "[" } } }]])
    local r, err = classify.load(p)
    assert.is_nil(r)
    assert.matches("bad pattern", err)
    os.remove(p)
    -- read whole: Lua itself reads a pattern only as far as a match gets (find("", "v[") is nil)
    for _, c in ipairs({ { "v[", "a set without its ']'" }, { "gemm%", "it ends with '%%'" }, { "(x", "a '%(' without its '%)'" },
                         { "x%b(", "'%%b' needs two characters" }, { "%fx", "'%%f' needs a set" },
                         { ("(.-)"):rep(5) .. "Z", "5 repetitions, more than 4" },
                         { ("(.-)"):rep(4) .. "%1", "5 repetitions %(1 of them back%-references, which count as repetitions%), more than 4" } }) do
      local ok, e = pcall(classify.check, { { id = "r", family = "gemm", kernel = { c[1] } } })
      assert.is_false(ok, c[1])
      assert.matches("rule 1 %('r'%): 'kernel' has a bad pattern .* %(" .. c[2], e)
    end
    for _, good in ipairs({ "[%]]", "[]]", "[^]a]", "%f[%w]gemm", "%b()", "^sm90_.*gemm", "a.-b.-c.-d.-e" }) do
      assert.is_true((pcall(classify.check, { { id = "r", family = "gemm", kernel = { good } } })), good)
    end
    -- a rules file runs under a step limit, and its errors name it once
    p = tmpfile("while true do end")
    r, err = classify.load(p)
    assert.is_nil(r)
    assert.matches(p:gsub("%p", "%%%0") .. ":1: ran past its step limit", err)
    os.remove(p)
    p = tmpfile("local x = nil; return x.y")
    r, err = classify.load(p)
    assert.is_nil(r)
    assert.is_nil(err:find(p .. ": " .. p, 1, true), err)
    os.remove(p)
    r, err = classify.load("/nonexistent/rules.lua")
    assert.is_nil(r)
    assert.matches("/nonexistent/rules.lua", err)
  end)

  it("rejects malformed rules", function()
    assert.error_matches(function() classify.new({ { family = "gemm" } }) end, "rule 1: needs 'kernel' or 'name' patterns")
    assert.error_matches(function() classify.new({ { kernel = { "x" } } }) end, "rule 1: 'family' must be a string")
    assert.error_matches(function() classify.new({ { id = "t", family = "gemm", kernels = { "x" } } }) end,
      "rule 1 %('t'%): unknown field 'kernels'")
    assert.error_matches(function() classify.new({ { family = "gemm", name = "x" } }) end, "rule 1: 'name' must be a list of patterns")
  end)

  it("counts every family but the vendors' as addressable, unless a policy says otherwise", function()
    for _, f in ipairs({ "gemm", "attention", "conv", "comm", "memory" }) do assert.is_false(classify.addressable(f)) end
    for _, f in ipairs({ "elementwise", "reduction", "normalization", "softmax_loss", "embedding", "index",
                         "sort_scan", "optimizer", "other" }) do
      assert.is_true(classify.addressable(f))
    end
    assert.is_true(classify.addressable("gemm", { gemm = true }))
    assert.is_false(classify.addressable("other", { other = false }))
    assert.is_true(classify.addressable("elementwise", { other = false }))
  end)
end)
