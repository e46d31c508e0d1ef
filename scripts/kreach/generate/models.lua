-- kreach.generate.models: a model configuration for `kreach generate` (issue 19). `--model NAME`
-- names a configuration file (NAME itself when it ends in .lua, else NAME.lua in the first of
-- kreach.home's places for experiments/models/ that has it: beside or above the binary, the
-- install prefix's share/kreach/models, else the source tree's; never the working directory's)
-- or, when there is none, a bare model id, which needs a provider named (the caller's
-- `provider`): a misspelt configuration is a usage error, not a request for a model of that
-- name. A configuration file returns a table:
--   { provider = "openai" | "anthropic", model = "id", base_url = "...", api_key_env = "VAR",
--     temperature =, max_tokens =, top_p =, format = "lua" | "python" (the prompt variant),
--     price_in = USD per million input tokens, price_out = USD per million output tokens,
--     extra = { field = value } (more request fields: reasoning, thinking...), notes = "..." }
-- The file runs as a candidate file does (kreach.candidate.lua's sandbox: no io, os or require),
-- under a step limit and a cap on the Lua heap, and every field is checked here, so that a
-- configuration that loops, or gives a temperature of 0/0, fails at once naming the file.
local errors = require "kreach.errors"
local candidate = require "kreach.candidate.lua"
local home = require "kreach.home"
local kinds = require "kreach.kinds"
local text = require "kreach.text"
local providers = require "kreach.generate.providers"
local util = require "kreach.core.util"
local cjson = require "cjson"

local M = {}

local FIELDS = { provider = "string", model = "string", base_url = "string", api_key_env = "string",
                 temperature = "number", max_tokens = "number", top_p = "number", format = "string",
                 price_in = "number", price_out = "number", extra = "table", notes = "string" }

M.KEY_ENV = { openai = "OPENAI_API_KEY", anthropic = "ANTHROPIC_API_KEY" }

-- The most a configuration's loading may run: Lua instructions, and bytes of the Lua heap.
M.LOAD_STEPS = 10000000
M.LOAD_HEAP_BYTES = 64 * 1024 * 1024

-- the request fields kreach sets itself, which `extra` may not replace
local SET_BY_KREACH = { model = true, messages = true, system = true, temperature = true, top_p = true, max_tokens = true }

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

-- `extra` goes into the request's JSON as it is: strings, booleans, finite numbers and tables
-- of them (keys strings, or an array's), at most 32 levels deep, no table twice
local function check_json(v, where, depth, seen)
  local t = type(v)
  if t == "string" or t == "boolean" then return nil end
  if t == "number" then return (not finite(v)) and ("%s is %s, not a finite number"):format(where, v ~= v and "NaN" or tostring(v)) or nil end
  if t ~= "table" then return ("%s is a %s (a request field is a string, a number, a boolean or a table)"):format(where, t) end
  if depth > 32 then return ("%s: more than 32 levels of tables"):format(where) end
  if seen[v] then return ("%s: a table that appears twice (or contains itself)"):format(where) end
  seen[v] = true
  for k, x in pairs(v) do
    if type(k) ~= "string" and math.type(k) ~= "integer" then
      return ("%s has a key that is a %s (keys are strings)"):format(where, type(k))
    end
    local why = check_json(x, type(k) == "string" and (where .. "." .. k) or ("%s[%d]"):format(where, k), depth + 1, seen)
    if why then return why end
  end
  return nil
end

-- the fields' values, beyond their types: a bad one names the file and the field
local function check_values(c, path)
  local function bad(field, what)
    local v = c[field]
    errors.file(path, ("field '%s' is %s: %s"):format(field, v ~= v and "NaN" or tostring(v), what))
  end
  if c.model == "" then errors.file(path, "field 'model' is empty (the provider's model id)") end
  if c.temperature ~= nil and not (finite(c.temperature) and c.temperature >= 0) then bad("temperature", "a finite number >= 0") end
  if c.top_p ~= nil and not (finite(c.top_p) and c.top_p > 0 and c.top_p <= 1) then bad("top_p", "a number above 0, at most 1") end
  if c.max_tokens ~= nil then
    local n = math.tointeger(c.max_tokens)
    if not (n and n >= 1) then bad("max_tokens", "a positive integer") end
  end
  for _, f in ipairs({ "price_in", "price_out" }) do
    if c[f] ~= nil and not (finite(c[f]) and c[f] >= 0) then bad(f, "a finite number of USD per million tokens, >= 0") end
  end
  if c.api_key_env ~= nil and c.api_key_env ~= "none" and not c.api_key_env:match("^[%a_][%w_]*$") then
    bad("api_key_env", "the name of an environment variable (letters, digits, _), or 'none'")
  end
  if c.base_url ~= nil then
    local ok, why = providers.check_base_url(c.base_url)
    if not ok then errors.file(path, ("field 'base_url' ('%s'): %s"):format(c.base_url:gsub("%c", "?"), why)) end
  end
  if c.extra ~= nil then
    for k in pairs(c.extra) do
      if SET_BY_KREACH[k] then
        errors.file(path, ("field 'extra': '%s' is a request field kreach sets (give it as its own field, or on the command line)"):format(k))
      end
    end
    local why = check_json(c.extra, "extra", 1, {})
    if not why then
      local ok, e = pcall(cjson.encode, c.extra)
      if not ok then why = "extra: " .. tostring(e) end
    end
    if why then errors.file(path, "field " .. why) end
  end
end

local function file_exists(p)
  local f = io.open(p, "r")
  if f then f:close() return true end
  return false
end

-- The directories searched for NAME.lua, in order, and every place looked at.
function M.dirs()
  return home.dirs("experiments/models", "models")
end

-- load(name, provider) -> config table, and the file it came from (nil for a bare model id,
-- which is taken only with a provider given: without one, a usage error naming where the
-- configurations were looked for)
function M.load(name, provider)
  if type(name) ~= "string" or name == "" then errors.usage("--model: a configuration or a model id is required") end
  local path
  if name:match("%.lua$") then
    path = name
    if not file_exists(path) then errors.file(path, "no such model configuration") end
  else
    local dirs, looked = M.dirs()
    local plain = name:match("^[%w_.%-]+$") ~= nil -- a configuration's name
    if plain then
      for _, d in ipairs(dirs) do
        if file_exists(d .. "/" .. name .. ".lua") then path = d .. "/" .. name .. ".lua" break end
      end
    end
    if not path and not provider then
      local shown = text.clean(name, 200)
      if not plain then
        errors.usage("--model '%s': not a configuration's name (letters, digits, '_', '.', '-') nor a .lua file; for a model id, name its --provider (openai or anthropic)",
          shown)
      end
      errors.usage("--model '%s': no model configuration %s.lua (looked in: %s); for a model id, name its --provider (openai or anthropic)",
        shown, shown, #looked > 0 and table.concat(looked, ", ") or "nowhere: kreach's own path is unknown")
    end
  end
  if not path then return { model = name, name = name:gsub("[^%w_.%-]", "-") } end
  local chunk, err = loadfile(path, "t", candidate.environment())
  if not chunk then errors.file(path, err) end
  collectgarbage()
  local before = util.heap_limit(util.heap_used() + M.LOAD_HEAP_BYTES)
  local ok, c = candidate.run_limited(M.LOAD_STEPS, "@" .. path, chunk)
  util.heap_limit(before)
  collectgarbage()
  if not ok then
    local msg = tostring(c)
    if msg:find("not enough memory", 1, true) then
      msg = ("loading it asked for more than %d MiB"):format(M.LOAD_HEAP_BYTES // 2 ^ 20)
    end
    errors.file(path, msg)
  end
  if type(c) ~= "table" then errors.file(path, "a model configuration returns a table") end
  for k, v in pairs(c) do
    local want = FIELDS[k]
    if not want then
      local names = {}
      for f in pairs(FIELDS) do names[#names + 1] = f end
      table.sort(names)
      errors.file(path, ("unknown field '%s' (fields: %s)"):format(tostring(k), table.concat(names, ", ")))
    end
    if type(v) ~= want then errors.file(path, ("field '%s' is a %s, not a %s"):format(k, type(v), want)) end
  end
  if not c.model then errors.file(path, "missing field 'model' (the provider's model id)") end
  if c.provider and c.provider ~= "openai" and c.provider ~= "anthropic" then
    errors.file(path, ("provider '%s': openai or anthropic"):format(c.provider))
  end
  if c.format and not kinds.set(kinds.CANDIDATE_KINDS)[c.format] then errors.file(path, ("format '%s': %s"):format(c.format, kinds.words(kinds.CANDIDATE_KINDS))) end
  check_values(c, path)
  c.name = (path:match("([^/]+)%.lua$") or c.model):gsub("[^%w_.%-]", "-")
  return c, path
end

return M
