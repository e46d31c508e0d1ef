-- kreach.tensors: making tensors, for the internal modules (the facade's kreach.empty,
-- kreach.zeros, kreach.full, kreach.from_table, kreach.from_bytes, kreach.is_tensor,
-- kreach.dtype_size and kreach.dtypes are these). The mechanism is kreach.core.tensor.
local tensor = require "kreach.core.tensor"

local M = {
  empty = tensor.empty,           -- empty(shape, dtype="f32"): uninitialised
  from_table = tensor.from_table, -- from_table(values, {shape=, dtype=})
  from_bytes = tensor.from_bytes, -- from_bytes(string, shape, dtype)
  is_tensor = tensor.is_tensor,
  dtype_size = tensor.dtype_size,
  dtypes = tensor.dtypes(),       -- the dtypes' names: { "f64", ... }
}

-- zeros(shape, dtype="f32") -> a tensor of zeros
function M.zeros(shape, dtype)
  return tensor.empty(shape, dtype):fill(0)
end

-- full(shape, value, dtype="f32") -> a tensor with every element `value`
function M.full(shape, value, dtype)
  return tensor.empty(shape, dtype):fill(value)
end

return M
