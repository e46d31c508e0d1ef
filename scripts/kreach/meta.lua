-- kreach.meta: shape-only tensors. A problem's reference runs on these to check, without a
-- GPU, that every operator gets arguments of the right shapes and dtypes and that every output
-- is written with the shape it was declared with. They answer the same metadata calls as real
-- tensors (shape, dtype, numel, dim, size, view, reshape, flatten, narrow) and nothing else.
local tensor = require "kreach.core.tensor"

local M = {}

local Meta = {}
Meta.__name = "kreach.MetaTensor"

local function numel(shape)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return n
end

local function copy(t)
  local r = {}
  for i, v in ipairs(t) do r[i] = v end
  return r
end

function M.new(shape, dtype, name)
  for i, s in ipairs(shape) do
    if math.type(s) ~= "integer" or s < 0 then
      error(("size %d of %s is %s, not a non-negative integer"):format(i, name or "a tensor", tostring(s)), 2)
    end
  end
  if #shape > 8 then error(("%s has %d dimensions (at most 8)"):format(name or "a tensor", #shape), 2) end
  return setmetatable({ _shape = copy(shape), _dtype = dtype, _name = name, _root = nil }, Meta)
end

function M.is_meta(t) return getmetatable(t) == Meta end

Meta.__index = function(t, k)
  if k == "shape" then return copy(rawget(t, "_shape")) end
  if k == "dtype" then return rawget(t, "_dtype") end
  return Meta[k]
end

function Meta.__tostring(t)
  return ("kreach.MetaTensor(%s, {%s})"):format(t._dtype, table.concat(t._shape, ", "))
end

function Meta:numel() return numel(self._shape) end
function Meta:dim() return #self._shape end
function Meta:nbytes() return self:numel() * tensor.dtype_size(self._dtype) end
function Meta:is_live() return true end
function Meta:size(i)
  if i == nil then return copy(self._shape) end
  if i < 0 then i = i + #self._shape + 1 end
  local s = self._shape[i]
  if not s then error(("dimension %d out of range (the tensor has %d)"):format(i, #self._shape), 2) end
  return s
end

-- The tensor a view was made from: writes through a view count as writes of the root.
function Meta:root() return rawget(self, "_root") or self end

local function view_of(t, shape)
  local v = M.new(shape, t._dtype, t._name)
  v._root = t:root()
  return v
end

function Meta:view(a, ...)
  local shape = type(a) == "table" and copy(a) or { a, ... }
  local n, infer, known = self:numel(), nil, 1
  for i, s in ipairs(shape) do
    if s == -1 then
      if infer then error("only one size of a view may be -1", 2) end
      infer = i
    else
      known = known * s
    end
  end
  if infer then
    if known == 0 or n % known ~= 0 then
      error(("cannot infer size %d: %d elements do not divide into %d"):format(infer, n, known), 2)
    end
    shape[infer] = n // known
  elseif known ~= n then
    error(("a view of %d elements cannot have %d"):format(n, known), 2)
  end
  return view_of(self, shape)
end
Meta.reshape = Meta.view

function Meta:flatten() return view_of(self, { self:numel() }) end

function Meta:narrow(dim, start, len)
  local shape = copy(self._shape)
  if not shape[dim] then error(("dimension %d out of range (the tensor has %d)"):format(dim, #shape), 2) end
  for i = 1, dim - 1 do
    if shape[i] ~= 1 then error(("narrowing dimension %d would not be contiguous"):format(dim), 2) end
  end
  if start < 1 or len < 0 or start - 1 + len > shape[dim] then
    error(("elements %d to %d are out of range for dimension %d of size %d"):format(start,
      start + len - 1, dim, shape[dim]), 2)
  end
  shape[dim] = len
  return view_of(self, shape)
end

-- Writes are recorded on the root tensor by the operator library.
function Meta:mark_written() self:root()._written = true end
function Meta:written() return self:root()._written == true end

return M
