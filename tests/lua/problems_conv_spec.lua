-- The 35 convolutions of KernelBench level 1 (50, 54 to 87) without a GPU: each port's
-- arguments against upstream's shapes, written out here from the upstream table
-- (/work/shared/data/kernelbench_level1.tsv and upstream's files), with the output shape and the
-- weight's fan_in computed here from the convolution's parameters rather than taken from the
-- problem file; the init rules, torch.init, the flop counts, size overrides and the upstream
-- quirks (50's bias, 73's groups, 85's unused arguments, 59's layout, 86's two convolutions).
local problem = require "kreach.problem"
local lfs = require "lfs"

local DIR = "problems/kernelbench/level1"

-- Upstream's parameters. t: transposed; x: the input shape; cin, cout, k (per spatial dim),
-- stride, pad, dil, opad (a number for every dim, or a list), groups; init: get_init_inputs as
-- written in the port's torch.init.
local CONV = {
  [50] = { x = { 256, 3, 224, 224 }, cin = 3, cout = 96, k = { 11, 11 }, stride = 4, pad = 2,
           bias = true, init = "[num_classes]" },
  [54] = { x = { 16, 3, 64, 64, 64 }, cin = 3, cout = 64, k = { 3, 3, 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [55] = { x = { 8, 64, 512, 1024 }, cin = 64, cout = 128, k = { 3, 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [56] = { x = { 8, 64, 512, 256 }, cin = 64, cout = 128, k = { 5, 7 },
           init = "[in_channels, out_channels, (kernel_h, kernel_w)]" },
  [57] = { t = true, x = { 8, 64, 1024, 1024 }, cin = 64, cout = 64, k = { 3, 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [58] = { t = true, x = { 16, 32, 16, 32, 64 }, cin = 32, cout = 16, k = { 3, 5, 7 },
           init = "[in_channels, out_channels, (kernel_d, kernel_h, kernel_w)]" },
  -- (N, C, H, W, D) with D = 10 last; the kernel (3, 3, 1) leaves D alone
  [59] = { x = { 16, 3, 256, 256, 10 }, cin = 3, cout = 64, k = { 3, 3, 1 },
           init = "[in_channels, out_channels, kernel_size]" },
  [60] = { x = { 16, 3, 64, 64, 64 }, cin = 3, cout = 64, k = { 3, 5, 7 },
           init = "[in_channels, out_channels, (kernel_w, kernel_h, kernel_d)]" },
  [61] = { t = true, x = { 8, 48, 64, 64, 64 }, cin = 48, cout = 48, k = { 3, 3, 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [62] = { x = { 8, 32, 512, 512 }, cin = 32, cout = 64, k = { 5, 9 },
           init = "[in_channels, out_channels, (kernel_h, kernel_w)]" },
  [63] = { x = { 16, 16, 1024, 1024 }, cin = 16, cout = 128, k = { 3, 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [64] = { t = true, x = { 64, 128, 65536 }, cin = 128, cout = 128, k = { 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [65] = { t = true, x = { 8, 64, 512, 512 }, cin = 64, cout = 64, k = { 3, 7 },
           init = "[in_channels, out_channels, (kernel_h, kernel_w)]" },
  [66] = { x = { 8, 3, 16, 128, 128 }, cin = 3, cout = 64, k = { 3, 5, 7 },
           init = "[in_channels, out_channels, (kernel_d, kernel_h, kernel_w)]" },
  [67] = { x = { 32, 64, 131072 }, cin = 64, cout = 128, k = { 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [68] = { t = true, x = { 16, 32, 64, 64, 64 }, cin = 32, cout = 64, k = { 3, 5, 5 },
           init = "[in_channels, out_channels, (kernel_depth, kernel_width, kernel_height)]" },
  [69] = { t = true, x = { 64, 64, 128, 256 }, cin = 64, cout = 128, k = { 3, 5 },
           init = "[in_channels, out_channels, (kernel_h, kernel_w)]" },
  [70] = { t = true, x = { 8, 48, 96, 96, 96 }, cin = 48, cout = 24, k = { 3, 3, 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [71] = { t = true, x = { 8, 32, 512, 1024 }, cin = 32, cout = 32, k = { 3, 3 },
           init = "[in_channels, out_channels, kernel_size]" },
  [72] = { t = true, x = { 8, 32, 12, 24, 48 }, cin = 32, cout = 32, k = { 3, 5, 7 }, stride = 2,
           pad = { 1, 2, 3 }, opad = 1, groups = 4,
           init = "[in_channels, out_channels, (kernel_d, kernel_h, kernel_w), (stride_d, stride_h, stride_w), (padding_d, padding_h, padding_w), (output_padding_d, output_padding_h, output_padding_w), groups]" },
  -- groups 1 and output_padding 0: the sixth init value (groups = 4) binds to output_padding,
  -- which the module never passes on
  [73] = { t = true, x = { 4, 32, 32, 64, 128 }, cin = 32, cout = 32, k = { 3, 3, 3 }, stride = 2,
           pad = 1, init = "[in_channels, out_channels, kernel_size, stride, padding, groups]" },
  [74] = { t = true, x = { 32, 32, 131072 }, cin = 32, cout = 64, k = { 5 }, dil = 3,
           init = "[in_channels, out_channels, kernel_size, stride, padding, dilation]" },
  [75] = { t = true, x = { 16, 32, 128, 256 }, cin = 32, cout = 64, k = { 3, 5 }, stride = { 2, 3 },
           pad = { 1, 2 }, dil = { 2, 1 }, groups = 4,
           init = "[in_channels, out_channels, (kernel_h, kernel_w), (stride_h, stride_w), (padding_h, padding_w), (dilation_h, dilation_w), groups]" },
  [76] = { x = { 64, 64, 524280 }, cin = 64, cout = 128, k = { 3 }, stride = 3, dil = 4,
           init = "[in_channels, out_channels, kernel_size, stride, dilation]" },
  [77] = { t = true, x = { 16, 32, 16, 32, 32 }, cin = 32, cout = 64, k = { 3, 3, 3 }, stride = 2,
           pad = 1, dil = 2, init = "[in_channels, out_channels, kernel_size, stride, padding, dilation]" },
  [78] = { t = true, x = { 8, 32, 512, 1024 }, cin = 32, cout = 32, k = { 3, 7 }, pad = { 1, 3 },
           init = "[in_channels, out_channels, (kernel_h, kernel_w), (stride_h, stride_w), (padding_h, padding_w)]" },
  [79] = { t = true, x = { 16, 32, 131072 }, cin = 32, cout = 64, k = { 3 }, stride = 2, pad = 1,
           dil = 2, init = "[in_channels, out_channels, kernel_size, stride, padding, dilation]" },
  [80] = { x = { 8, 32, 512, 512 }, cin = 32, cout = 64, k = { 5, 9 }, pad = { 2, 4 }, dil = { 2, 3 },
           init = "[in_channels, out_channels, (kernel_h, kernel_w), stride, (padding_h, padding_w), (dilation_h, dilation_w)]" },
  [81] = { t = true, x = { 16, 32, 64, 128 }, cin = 32, cout = 64, k = { 3, 3 }, stride = 5, pad = 1,
           dil = 2, init = "[in_channels, out_channels, kernel_size, stride, padding, dilation]" },
  [82] = { x = { 16, 64, 512, 512 }, cin = 64, cout = 64, k = { 3, 3 }, groups = 64,
           init = "[in_channels, kernel_size, stride, padding]" },
  [83] = { x = { 64, 8, 512, 512 }, cin = 8, cout = 8, k = { 3, 1 }, groups = 8,
           init = "[in_channels, kernel_size, stride, padding, dilation]" },
  [84] = { x = { 64, 128, 256, 512 }, cin = 128, cout = 128, k = { 3, 3 }, groups = 128,
           init = "[in_channels, out_channels, kernel_size, stride, padding]" },
  -- out_channels and groups are passed and unused: Conv2d(in, in, (3, 7), groups=in)
  [85] = { x = { 32, 128, 128, 256 }, cin = 128, cout = 128, k = { 3, 7 }, groups = 128,
           init = "[in_channels, out_channels, kernel_size_h, kernel_size_w, stride_h, stride_w, padding_h, padding_w, dilation_h, dilation_w, groups]" },
  -- depthwise Conv2d(64, 64, 3, padding=1, groups=64), then pointwise Conv2d(64, 128, 1)
  [86] = { x = { 16, 64, 512, 512 }, cin = 64, cout = 128, k = { 3, 3 }, pad = 1, separable = true,
           init = "[in_channels, out_channels, kernel_size, stride, padding, dilation]" },
  [87] = { x = { 16, 64, 1024, 1024 }, cin = 64, cout = 128, k = { 1, 1 },
           init = "[in_channels, out_channels]" },
}

local function per_dim(v, n, default)
  if v == nil then v = default end
  if type(v) == "number" then
    local t = {}
    for i = 1, n do t[i] = v end
    return t
  end
  return v
end

-- PyTorch's shapes for one convolution: weight and output
local function shapes(c)
  local n = #c.k
  local s, p = per_dim(c.stride, n, 1), per_dim(c.pad, n, 0)
  local d, op = per_dim(c.dil, n, 1), per_dim(c.opad, n, 0)
  local g = c.groups or 1
  local w = c.t and { c.cin, c.cout // g } or { c.cout, c.cin // g }
  local y = { c.x[1], c.cout }
  for i = 1, n do
    w[i + 2] = c.k[i]
    local len = c.x[i + 2]
    if c.t then
      y[i + 2] = (len - 1) * s[i] - 2 * p[i] + d[i] * (c.k[i] - 1) + op[i] + 1
    else
      y[i + 2] = math.floor((len + 2 * p[i] - d[i] * (c.k[i] - 1) - 1) / s[i]) + 1
    end
  end
  return w, y
end

local function prod(t, from)
  local r = 1
  for i = from or 1, #t do r = r * t[i] end
  return r
end

local function file_of(id)
  for f in lfs.dir(DIR) do
    if f:match("^0*" .. id .. "_.*%.lua$") and tonumber(f:match("^(%d+)_")) == id then
      return DIR .. "/" .. f
    end
  end
end

-- the init rule of a parameter at its resolved shape
local function rule(a) return problem.init_rule(a) end

local function by_kind(inst, kind)
  local r = {}
  for _, a in ipairs(inst.args) do if a.kind == kind then r[#r + 1] = a end end
  return r
end

describe("the KernelBench level-1 convolutions", function()
  local ids = {}
  for id in pairs(CONV) do ids[#ids + 1] = id end
  table.sort(ids)

  it("are the 35 problems 50 and 54 to 87", function()
    assert.equals(35, #ids)
    assert.equals(50, ids[1])
    for i = 2, 35 do assert.equals(52 + i, ids[i]) end
  end)

  for _, id in ipairs(ids) do
    local c = CONV[id]
    it(("%d: loads, with upstream's shapes, init rule and constructor arguments"):format(id), function()
      local path = assert(file_of(id), "no file for problem " .. id)
      local p = problem.load(path)
      assert.equals(id, p.id)
      assert.equals("convolution", p.category)
      -- its subcategory, from upstream's parameters: separable, depthwise (groups = channels),
      -- pointwise (a 1x1 kernel), else transposed or standard; and the spatial dimensions
      local form = (c.separable and "separable") or (c.groups and c.groups == c.cin and not c.t and "depthwise")
        or (prod(c.k) == 1 and "pointwise") or (c.t and "transposed") or "standard"
      assert.equals(("%s %dD"):format(form, #c.k), p.subcategory)
      assert.equals(c.init, p.def.torch.init)
      local inst = p:instantiate()
      local inputs, params, outputs = by_kind(inst, "input"), by_kind(inst, "param"), by_kind(inst, "output")
      assert.equals(1, #inputs)
      assert.equals(1, #outputs)
      assert.same(c.x, inputs[1].shape)
      assert.equals("uniform", inputs[1].dist.gen)
      assert.same({ 0, 1 }, inputs[1].dist.args)
      assert.equals("real", inputs[1].domain)
      if c.separable then
        -- the depthwise conv keeps the extents (padding 1 for a 3x3 kernel), the pointwise one
        -- changes the channels
        local dw, dy = shapes{ x = c.x, cin = c.cin, cout = c.cin, k = c.k, pad = c.pad, groups = c.cin }
        local pw, py = shapes{ x = dy, cin = c.cin, cout = c.cout, k = { 1, 1 } }
        assert.equals(2, #params)
        assert.same(dw, params[1].shape)
        assert.same(pw, params[2].shape)
        assert.equals(("kaiming_uniform(%d)"):format(prod(c.k)), rule(params[1]))
        assert.equals(("kaiming_uniform(%d)"):format(c.cin), rule(params[2]))
        assert.same(py, outputs[1].shape)
        assert.same(c.x, dy)
        assert.equals(2 * prod(dy) * prod(c.k) + 2 * prod(py) * c.cin, inst.flops)
        return
      end
      local w, y = shapes(c)
      -- PyTorch's fan_in is weight.size(1) * prod(kernel): in_channels / groups for a
      -- convolution, out_channels / groups for a transposed one
      local fan_in = prod(w, 2)
      assert.equals((c.t and c.cout or c.cin) // (c.groups or 1) * prod(c.k), fan_in)
      assert.same(w, params[1].shape)
      assert.equals("weight", params[1].name)
      assert.equals(("kaiming_uniform(%d)"):format(fan_in), rule(params[1]))
      assert.same(y, outputs[1].shape)
      if c.bias then
        assert.equals(2, #params)
        assert.equals("bias", params[2].name)
        assert.same({ c.cout }, params[2].shape)
        -- nn.Conv2d's bias bound is the weight's, 1/sqrt(fan_in)
        assert.equals(("kaiming_uniform(%d)"):format(fan_in), rule(params[2]))
        assert.equals(2 * prod(y) * fan_in + prod(y), inst.flops)
      else
        assert.equals(1, #params)
        if c.t then
          assert.equals(2 * prod(c.x) * (c.cout // (c.groups or 1)) * prod(c.k), inst.flops)
        else
          assert.equals(2 * prod(y) * (c.cin // (c.groups or 1)) * prod(c.k), inst.flops)
        end
      end
    end)
  end

  it("keep what upstream's models ignore out of the computation (73, 85) and hard-code (50)", function()
    -- 73: the size 'groups' is upstream's sixth init value, bound to the ignored output_padding
    local p73 = problem.load(file_of(73))
    assert.equals(4, p73.sizes.groups)
    local a = p73:instantiate{ sizes = { groups = 8 } }
    assert.same({ 32, 32, 3, 3, 3 }, a.args[2].shape)
    assert.same({ 4, 32, 63, 127, 255 }, a.args[3].shape)
    -- 85: out_channels and groups change nothing
    local p85 = problem.load(file_of(85))
    local b = p85:instantiate{ sizes = { out_channels = 7, groups = 3 } }
    assert.same({ 128, 1, 3, 7 }, b.args[2].shape)
    assert.same({ 32, 128, 126, 250 }, b.args[3].shape)
    -- 50: num_classes is unused; the channels are not sizes (the model hard-codes them)
    local p50 = problem.load(file_of(50))
    assert.is_nil(p50.sizes.in_channels)
    local c = p50:instantiate{ sizes = { num_classes = 10 } }
    assert.same({ 256, 96, 55, 55 }, c.args[4].shape)
  end)

  it("follow size overrides in the weights, their fan_in, the output and the reference", function()
    -- 75: grouped, strided, padded, dilated, transposed
    local p = problem.load(file_of(75))
    local inst = p:instantiate{ sizes = { batch_size = 2, in_channels = 6, out_channels = 9,
      groups = 3, height = 5, width = 4, kernel_h = 2, stride_w = 2, dilation_w = 3 } }
    local w, y = shapes{ t = true, x = { 2, 6, 5, 4 }, cin = 6, cout = 9, k = { 2, 5 },
      stride = { 2, 2 }, pad = { 1, 2 }, dil = { 2, 3 }, groups = 3 }
    assert.same(w, inst.args[2].shape)
    assert.equals(("kaiming_uniform(%d)"):format(3 * 2 * 5), rule(inst.args[2]))
    assert.same(y, inst.args[3].shape)
    assert.is_true(inst:validate())
    -- 84: out_channels a multiple of in_channels (a depthwise multiplier of 2)
    local q = problem.load(file_of(84)):instantiate{ sizes = { batch_size = 1, in_channels = 4,
      out_channels = 8, height_in = 9, width_in = 7, stride = 2, padding = 1 } }
    assert.same({ 8, 1, 3, 3 }, q.args[2].shape)
    assert.same({ 1, 8, 5, 4 }, q.args[3].shape)
    assert.is_true(q:validate())
    -- 86: the intermediate follows stride and padding
    local r = problem.load(file_of(86)):instantiate{ sizes = { batch_size = 1, in_channels = 3,
      out_channels = 5, height = 9, width = 8, stride = 2, padding = 0 } }
    assert.same({ 1, 5, 4, 3 }, r.args[4].shape)
    assert.is_true(r:validate())
  end)
end)
