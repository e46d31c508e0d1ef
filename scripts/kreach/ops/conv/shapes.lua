-- kreach.ops.conv.shapes: a convolution's options and shapes, checked as PyTorch checks them
-- (resolve: the geometry every plan starts from), and PyTorch's output sizes.
local M = {}

local NAMES = { "stride", "padding", "dilation", "groups", "bias", "output_padding", "algo" }
local KNOWN = {}
for _, k in ipairs(NAMES) do KNOWN[k] = true end
local ALGOS = { auto = true, gemm = true, mma = true, direct = true }
local LIMIT = 0x7fffffff
M.LIMIT = LIMIT

function M.shape_str(s) return "{" .. table.concat(s, ", ") .. "}" end
local shape_str = M.shape_str

local function show(v)
  if type(v) == "table" then
    local t = {}
    for i, e in ipairs(v) do t[i] = tostring(e) end
    return "{" .. table.concat(t, ", ") .. "}"
  end
  return type(v) == "string" and ("'" .. v .. "'") or tostring(v)
end

local function int_of(v)
  if math.type(v) == "integer" then return v end
  if math.type(v) == "float" then return math.tointeger(v) end
  return nil
end

-- an integer for every spatial dimension or a list of n; nil and a message otherwise
local function per_dim(v, n, what)
  local i = int_of(v)
  if i then
    local r = {}
    for d = 1, n do r[d] = i end
    return r
  end
  if type(v) ~= "table" or #v ~= n then
    return nil, ("%s is %s, expected an integer or a list of %d integers"):format(what, show(v), n)
  end
  local r = {}
  for d = 1, n do
    r[d] = int_of(v[d])
    if not r[d] then
      return nil, ("%s[%d] is %s, not an integer"):format(what, d, show(v[d]))
    end
  end
  return r
end

local function is_shape(s)
  if type(s) ~= "table" then return false end
  for i = 1, #s do if math.type(s[i]) ~= "integer" then return false end end
  return true
end


-- The ranks and sizes of x and w: n spatial dimensions, batched, N, C and the spatial sizes;
-- nil and a message when something is wrong.
local function dims(xs, ws, transposed)
  if not is_shape(xs) or not is_shape(ws) then return nil, "x and w need shapes (lists of integers)" end
  if #ws < 3 or #ws > 5 then
    return nil, ("w is %s: expected (%s, k1[, k2[, k3]]), 1 to 3 kernel dimensions"):format(
      shape_str(ws), transposed and "in_channels, out_channels/groups" or "out_channels, in_channels/groups")
  end
  local n = #ws - 2
  local batched
  if #xs == n + 2 then batched = true
  elseif #xs == n + 1 then batched = false
  else
    return nil, ("x is %s: expected %d (unbatched) or %d (batched) dimensions for the %d-D weight %s"):format(
      shape_str(xs), n + 1, n + 2, n, shape_str(ws))
  end
  local N = batched and xs[1] or 1
  local C = xs[batched and 2 or 1]
  local sp = {}
  for d = 1, n do sp[d] = xs[#xs - n + d] end
  if N < 0 then return nil, ("x is %s: a negative size"):format(shape_str(xs)) end
  if C < 1 then return nil, ("x is %s: no input channels"):format(shape_str(xs)) end
  for d = 1, n do
    if sp[d] < 1 then
      return nil, ("x is %s: expected a non-zero size along spatial dimension %d"):format(shape_str(xs), d)
    end
  end
  for i = 1, #ws do
    if ws[i] < 1 then return nil, ("w is %s: every size must be positive"):format(shape_str(ws)) end
  end
  return { n = n, batched = batched, N = N, C = C, spatial = sp }
end

-- The channels: Co, Cin_g and Cout_g for C input channels in `groups`; nil and a message when
-- they do not divide.
local function channels(xs, ws, C, groups, transposed)
  local Co, Cin_g, Cout_g
  if not transposed then
    Co, Cin_g = ws[1], ws[2]
    if Co % groups ~= 0 then
      return nil, ("w is %s: out_channels (%d) must be divisible by groups (%d)"):format(shape_str(ws), Co, groups)
    end
    if C ~= Cin_g * groups then
      return nil, ("Given groups=%d, weight of size %s, expected input %s to have %d channels, but got %d channels instead"):format(
        groups, shape_str(ws), shape_str(xs), Cin_g * groups, C)
    end
    Cout_g = Co // groups
  else
    if ws[1] ~= C then
      return nil, ("Given transposed=1, weight of size %s, expected input %s to have %d channels, but got %d channels instead"):format(
        shape_str(ws), shape_str(xs), ws[1], C)
    end
    if C % groups ~= 0 then
      return nil, ("x is %s: in_channels (%d) must be divisible by groups (%d)"):format(shape_str(xs), C, groups)
    end
    Cin_g, Cout_g = C // groups, ws[2]
    Co = Cout_g * groups
  end
  return Co, Cin_g, Cout_g
end

-- The padding on each side: opts.padding as integers or 'valid' / 'same' (for kernel k, stride
-- s and dilation dil); nil and a message when it is wrong.
local function padding(opts, n, k, s, dil, transposed)
  local pl, pr, err
  local pad = opts.padding == nil and 0 or opts.padding
  if type(pad) == "string" then
    if transposed then
      return nil, ("padding is '%s': a transposed convolution takes integers"):format(pad)
    end
    pl, pr = {}, {}
    if pad == "valid" then
      for d = 1, n do pl[d], pr[d] = 0, 0 end
    elseif pad == "same" then
      for d = 1, n do
        if s[d] ~= 1 then return nil, "padding='same' is not supported for strided convolutions" end
        local total = dil[d] * (k[d] - 1)
        pl[d] = total // 2
        pr[d] = total - pl[d]
      end
    else
      return nil, ("padding is '%s', expected 'valid', 'same', an integer or a list of %d integers"):format(pad, n)
    end
  else
    pl, err = per_dim(pad, n, "padding")
    if not pl then return nil, err end
    for d = 1, n do
      if pl[d] < 0 then return nil, ("negative padding is not supported, got %s"):format(show(pl)) end
    end
    pr = pl
  end
  return pl, pr
end

-- The options of a call with n spatial dimensions and kernel k: a table of stride, dilation,
-- pad, pad_right, output_padding (transposed only) and algo; nil and a message when one is wrong.
local function options(opts, n, k, transposed)
  local err
  local s, dil, pl, pr, op
  s, err = per_dim(opts.stride == nil and 1 or opts.stride, n, "stride")
  if not s then return nil, err end
  dil, err = per_dim(opts.dilation == nil and 1 or opts.dilation, n, "dilation")
  if not dil then return nil, err end
  for d = 1, n do
    if s[d] < 1 then return nil, ("stride should be greater than zero, got %s"):format(show(s)) end
    if dil[d] < 1 then return nil, ("dilation should be greater than zero, got %s"):format(show(dil)) end
  end
  pl, pr = padding(opts, n, k, s, dil, transposed)
  if not pl then return nil, pr end
  if transposed then
    op, err = per_dim(opts.output_padding == nil and 0 or opts.output_padding, n, "output_padding")
    if not op then return nil, err end
    for d = 1, n do
      if op[d] < 0 then return nil, ("negative output_padding is not supported, got %s"):format(show(op)) end
      if op[d] >= s[d] and op[d] >= dil[d] then
        return nil, ("output padding must be smaller than either stride or dilation, but got output_padding %d, stride %d, dilation %d along spatial dimension %d"):format(
          op[d], s[d], dil[d], d)
      end
    end
  elseif opts.output_padding ~= nil then
    return nil, "output_padding is an option of conv_transpose, not of conv"
  end
  local algo = opts.algo == nil and "auto" or opts.algo
  if not ALGOS[algo] then
    return nil, ("algo is %s, expected 'auto', 'gemm', 'mma' or 'direct'"):format(show(opts.algo))
  end
  return { stride = s, dilation = dil, pad = pl, pad_right = pr, output_padding = op, algo = algo }
end

-- The output's spatial sizes; nil and a message when one is too small or too large for the
-- kernels' 32-bit indices.
local function out_sizes(xs, sp, k, o, transposed)
  local s, dil, pl, pr, op = o.stride, o.dilation, o.pad, o.pad_right, o.output_padding
  local out = {}
  for d = 1, #sp do
    local span = dil[d] * (k[d] - 1) + 1
    if not transposed then
      if sp[d] + pl[d] + pr[d] < span then
        return nil, ("x is %s: along spatial dimension %d the padded input (%d) is smaller than the dilated kernel (%d)"):format(
          shape_str(xs), d, sp[d] + pl[d] + pr[d], span)
      end
      out[d] = M.out_len(sp[d], k[d], s[d], pl[d], dil[d], pr[d])
    else
      out[d] = M.transposed_out_len(sp[d], k[d], s[d], pl[d], dil[d], op[d])
      if out[d] < 1 then
        return nil, ("x is %s: the output size along spatial dimension %d would be %d (too small)"):format(
          shape_str(xs), d, out[d])
      end
    end
    -- the kernels index along a dimension with 32-bit integers (and a block's width past it)
    local reach = math.max(sp[d] + pl[d] + pr[d], out[d] + pl[d] + span) + 4096
    if reach > LIMIT then
      return nil, ("x is %s: sizes along spatial dimension %d near 2^31 are not supported"):format(shape_str(xs), d)
    end
  end
  return out
end

-- The geometry of a convolution of x (shape xs) by w (shape ws), checked as PyTorch checks it;
-- nil and a message (without the operator's name) when something is wrong. opts.bias is only
-- looked at for its presence here.
function M.resolve(xs, ws, opts, transposed)
  opts = opts or {}
  if type(opts) ~= "table" then return nil, ("options are %s, not a table"):format(type(opts)) end
  for key in pairs(opts) do
    if not KNOWN[key] then
      return nil, ("unknown option '%s' (known: %s)"):format(tostring(key), table.concat(NAMES, ", "))
    end
  end
  local dm, err = dims(xs, ws, transposed)
  if not dm then return nil, err end
  local n, batched, N, C, sp = dm.n, dm.batched, dm.N, dm.C, dm.spatial
  local groups = int_of(opts.groups == nil and 1 or opts.groups)
  if not groups or groups < 1 then
    return nil, ("groups is %s, expected a positive integer"):format(show(opts.groups))
  end
  local Co, Cin_g, Cout_g = channels(xs, ws, C, groups, transposed)
  if not Co then return nil, Cin_g end
  local k = {}
  for d = 1, n do k[d] = ws[2 + d] end
  local o
  o, err = options(opts, n, k, transposed)
  if not o then return nil, err end
  local out
  out, err = out_sizes(xs, sp, k, o, transposed)
  if not out then return nil, err end
  if N > LIMIT or C > LIMIT or Co > LIMIT then
    return nil, ("x is %s: batch and channel counts beyond 2^31 are not supported"):format(shape_str(xs))
  end
  local yshape = batched and { N, Co } or { Co }
  for d = 1, n do yshape[#yshape + 1] = out[d] end
  return { n = n, batched = batched, N = N, C = C, Co = Co, groups = groups, Cin_g = Cin_g,
           Cout_g = Cout_g, spatial = sp, out = out, k = k, stride = o.stride, pad = o.pad, pad_right = o.pad_right,
           dilation = o.dilation, output_padding = o.output_padding, transposed = transposed and true or false,
           algo = o.algo, yshape = yshape, xshape = xs, wshape = ws }
end

-- PyTorch's output extent along one dimension of extent d, for a kernel of extent k: of a
-- convolution, floor((d + pad + pad_right - dilation (k - 1) - 1) / stride) + 1 (pad_right:
-- pad unless given); of a transposed one, (d - 1) stride - 2 pad + dilation (k - 1) +
-- output_padding + 1. Problem files size their outputs with these (kreach.conv_out_len).
function M.out_len(d, k, stride, pad, dilation, pad_right)
  return (d + pad + (pad_right or pad) - dilation * (k - 1) - 1) // stride + 1
end
function M.transposed_out_len(d, k, stride, pad, dilation, output_padding)
  return (d - 1) * stride - 2 * pad + dilation * (k - 1) + output_padding + 1
end

-- The shape of y for x and w of these shapes (PyTorch's output shape); raises on what PyTorch
-- refuses. transposed: for conv_transpose.
function M.output_shape(xshape, wshape, opts, transposed)
  local g, err = M.resolve(xshape, wshape, opts, transposed)
  if not g then error((transposed and "conv_transpose: " or "conv: ") .. err, 2) end
  return g.yshape
end

return M
