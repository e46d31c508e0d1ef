-- kreach.generate.models: a model configuration for `kreach generate` (issue 19). `--model NAME`
-- names a configuration file (NAME itself when it ends in .lua, else experiments/models/NAME.lua
-- from the working directory) or, when there is none, a bare model id. A configuration file
-- returns a table:
--   { provider = "openai" | "anthropic", model = "id", base_url = "...", api_key_env = "VAR",
--     temperature =, max_tokens =, top_p =, format = "lua" | "python" (the prompt variant),
--     price_in = USD per million input tokens, price_out = USD per million output tokens,
--     extra = { field = value } (more request fields: reasoning, thinking...), notes = "..." }
local errors = require "kreach.errors"

local M = {}

local FIELDS = { provider = "string", model = "string", base_url = "string", api_key_env = "string",
                 temperature = "number", max_tokens = "number", top_p = "number", format = "string",
                 price_in = "number", price_out = "number", extra = "table", notes = "string" }

M.KEY_ENV = { openai = "OPENAI_API_KEY", anthropic = "ANTHROPIC_API_KEY" }

local function file_exists(p)
  local f = io.open(p, "r")
  if f then f:close() return true end
  return false
end

-- load(name) -> config table, and the file it came from (nil for a bare model id)
function M.load(name)
  if type(name) ~= "string" or name == "" then errors.usage("--model: a configuration or a model id is required") end
  local path
  if name:match("%.lua$") then
    path = name
    if not file_exists(path) then errors.file(path, "no such model configuration") end
  elseif name:match("^[%w_.%-]+$") and file_exists("experiments/models/" .. name .. ".lua") then
    path = "experiments/models/" .. name .. ".lua"
  end
  if not path then return { model = name, name = name:gsub("[^%w_.%-]", "-") } end
  local chunk, err = loadfile(path, "t", { math = math, string = string, table = table })
  if not chunk then errors.file(path, err) end
  local ok, c = pcall(chunk)
  if not ok then errors.file(path, tostring(c)) end
  if type(c) ~= "table" then errors.file(path, "a model configuration returns a table") end
  for k, v in pairs(c) do
    local want = FIELDS[k]
    if not want then
      local names = {}
      for f in pairs(FIELDS) do names[#names + 1] = f end
      table.sort(names)
      errors.file(path, ("unknown field '%s' (fields: %s)"):format(tostring(k), table.concat(names, ", ")))
    end
    if type(v) ~= want then errors.file(path, ("field '%s' is a %s, not a %s"):format(k, want, type(v))) end
  end
  if not c.model then errors.file(path, "missing field 'model' (the provider's model id)") end
  if c.provider and c.provider ~= "openai" and c.provider ~= "anthropic" then
    errors.file(path, ("provider '%s': openai or anthropic"):format(c.provider))
  end
  if c.format and c.format ~= "lua" and c.format ~= "python" then errors.file(path, ("format '%s': lua or python"):format(c.format)) end
  c.name = (path:match("([^/]+)%.lua$") or c.model):gsub("[^%w_.%-]", "-")
  return c, path
end

return M
