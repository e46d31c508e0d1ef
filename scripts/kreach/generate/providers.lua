-- kreach.generate.providers: the two HTTP APIs `kreach generate` asks models through (issue 19):
--   openai    the OpenAI-compatible Chat Completions API: POST {base}/chat/completions with
--             Authorization: Bearer (OpenAI, and vLLM, SGLang, llama.cpp's server, Ollama);
--   anthropic the Messages API: POST {base}/v1/messages with x-api-key and anthropic-version.
-- request(provider, spec) builds the HTTP request (kreach.http's form) and `record`, the same
-- without the key (what may be stored); parse(provider, result) reads a reply: its text, why it
-- stopped, the tokens, the request id, or the provider's error message (the key redacted).
local json = require "cjson"
local http = require "kreach.http"

local M = {}

M.DEFAULT_BASE = { openai = "https://api.openai.com/v1", anthropic = "https://api.anthropic.com" }
M.ANTHROPIC_VERSION = "2023-06-01"

-- check_base_url(url) -> true, or false and why: an API's base URL is http:// or https:// with
-- a host (kreach.core.http fetches nothing else; checked before any request so that the error
-- names the option or the configuration), without spaces or control characters.
function M.check_base_url(url)
  if type(url) ~= "string" or url == "" then return false, "an http:// or https:// URL is expected" end
  if url:find("[%s%c]") then return false, "a URL has no spaces or control characters" end
  local scheme, rest = url:match("^(%a[%w+.%-]*)://(.*)$")
  if not scheme then return false, "not a URL: an http:// or https:// URL is expected" end
  local sl = scheme:lower()
  if sl ~= "http" and sl ~= "https" then
    return false, ("the scheme '%s' is not http or https (the only protocols kreach speaks)"):format(scheme)
  end
  if rest:match("^[^/?#]*") == "" then return false, "the URL names no host" end
  return true
end

local function strip(base) return (base:gsub("/+$", "")) end

-- request(provider, {base =, model =, key =, system =, prompt =, messages =, temperature =,
-- max_tokens =, top_p =, extra = {field = value}}) -> request (url, method, headers with the
-- key, body), record (the body as a table, and the url: nothing secret)
-- messages: the conversation so far, { {role = "user" | "assistant", content = "..."} ... };
-- without it, one user message `prompt`.
function M.request(provider, s)
  if provider ~= "openai" and provider ~= "anthropic" then
    error(("unknown provider '%s' (openai, anthropic)"):format(tostring(provider)), 2)
  end
  if type(s.model) ~= "string" or s.model == "" then error("request: model is required", 2) end
  local base = strip(s.base or M.DEFAULT_BASE[provider])
  local msgs = s.messages or { { role = "user", content = s.prompt } }
  for i, m in ipairs(msgs) do
    if (m.role ~= "user" and m.role ~= "assistant") or type(m.content) ~= "string" then
      error(("request: message %d needs role user or assistant and a string content"):format(i), 2)
    end
  end
  local body, url, headers
  if provider == "openai" then
    local all = {}
    if s.system then all[1] = { role = "system", content = s.system } end
    for _, m in ipairs(msgs) do all[#all + 1] = { role = m.role, content = m.content } end
    body = { model = s.model, messages = all, temperature = s.temperature, top_p = s.top_p, max_tokens = s.max_tokens }
    url = base .. "/chat/completions"
    headers = { "Content-Type: application/json" }
    if s.key then headers[#headers + 1] = "Authorization: Bearer " .. s.key end
  else
    local all = {}
    for _, m in ipairs(msgs) do all[#all + 1] = { role = m.role, content = m.content } end
    body = { model = s.model, messages = all, system = s.system, temperature = s.temperature, top_p = s.top_p,
             max_tokens = s.max_tokens or 4096 }
    url = base .. "/v1/messages"
    headers = { "Content-Type: application/json", "anthropic-version: " .. M.ANTHROPIC_VERSION }
    if s.key then headers[#headers + 1] = "x-api-key: " .. s.key end
  end
  for k, v in pairs(s.extra or {}) do
    if body[k] ~= nil then error(("request: extra field '%s' would replace a field kreach sets"):format(k), 2) end
    body[k] = v
  end
  local text = json.encode(body)
  return { url = url, method = "POST", headers = headers, body = text }, { url = url, body = body }
end

local function decode(s)
  local ok, v = pcall(json.decode, s or "")
  if ok and type(v) == "table" then return v end
  return nil
end

-- A provider's error message from an error body (both APIs: {"error": {"message": ...}}), or
-- the body's start.
local function error_message(body)
  local v = decode(body)
  if v and type(v.error) == "table" and type(v.error.message) == "string" then return v.error.message end
  if v and type(v.error) == "string" then return v.error end
  local t = (body or ""):gsub("%s+", " ")
  return #t > 300 and (t:sub(1, 300) .. "...") or t
end

-- parse(provider, result, secrets) -> reply: { ok = true, text =, finish = "stop" | "length" |
-- other, truncated = bool, input_tokens =, output_tokens =, request_id =, model = } or
-- { ok = false, kind = "http" | "transport" | "format", status =, message = } (secrets, a list,
-- are redacted from every message). result: kreach.http's.
function M.parse(provider, r, secrets)
  local function fail(kind, msg)
    return { ok = false, kind = kind, status = r.status, message = http.redact(msg, secrets) }
  end
  -- a transfer that failed (no reply, a dropped connection, a reply past the size limit) is a
  -- transport failure even when a status line came first
  if r.error then return fail("transport", r.error) end
  if r.status ~= 200 then
    return fail("http", ("HTTP %d: %s"):format(r.status, error_message(r.body)))
  end
  local v = decode(r.body)
  if not v then return fail("format", "the reply is not JSON: " .. error_message(r.body)) end
  local rid = r.headers and (r.headers["x-request-id"] or r.headers["request-id"]) or nil
  if provider == "openai" then
    local c = type(v.choices) == "table" and v.choices[1]
    local msg = type(c) == "table" and c.message
    local text = type(msg) == "table" and msg.content
    if type(text) ~= "string" then return fail("format", "the reply has no choices[1].message.content") end
    local u = type(v.usage) == "table" and v.usage or {}
    local finish = type(c.finish_reason) == "string" and c.finish_reason or "unknown"
    return { ok = true, text = text, finish = finish, truncated = finish == "length",
             input_tokens = math.tointeger(u.prompt_tokens), output_tokens = math.tointeger(u.completion_tokens),
             request_id = type(v.id) == "string" and v.id or rid, model = v.model }
  else
    if type(v.content) ~= "table" then return fail("format", "the reply has no content") end
    local parts = {}
    for _, b in ipairs(v.content) do
      if type(b) == "table" and b.type == "text" and type(b.text) == "string" then parts[#parts + 1] = b.text end
    end
    if #parts == 0 then return fail("format", "the reply has no text block") end
    local u = type(v.usage) == "table" and v.usage or {}
    local stop = type(v.stop_reason) == "string" and v.stop_reason or "unknown"
    return { ok = true, text = table.concat(parts, "\n"), finish = stop, truncated = stop == "max_tokens",
             input_tokens = math.tointeger(u.input_tokens), output_tokens = math.tointeger(u.output_tokens),
             request_id = type(v.id) == "string" and v.id or rid, model = v.model }
  end
end

return M
