-- kreach.generate.extract: the candidate in a model's reply (issue 19). The candidate is a fenced
-- code block in the expected language: Lua for kreach's own format, Python for KernelBench's
-- (a `ModelNew`). Where there are several, the last one that loads as a candidate is taken, so a
-- decoy or a draft before the answer does not count. A reply cut off mid-block (a truncated
-- reply) still yields the block, marked unterminated.
local candidate = require "kreach.candidate.lua"
local util = require "kreach.core.util"

local M = {}

-- the languages a fence may name for each format ("" is a fence without a language)
M.LANGS = { lua = { lua = true, [""] = true }, python = { python = true, py = true, python3 = true } }

-- blocks(text) -> { {lang =, code =, unterminated = bool} ... }: the fenced blocks (``` or ~~~,
-- three or more, an optional language word after the opening fence), in order
function M.blocks(text)
  local out = {}
  local lines = {}
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do lines[#lines + 1] = line end
  local i = 1
  while i <= #lines do
    local indent, fence, info = lines[i]:match("^(%s*)(```+)%s*(.-)%s*$")
    if not fence then indent, fence, info = lines[i]:match("^(%s*)(~~~+)%s*(.-)%s*$") end
    if fence and #indent <= 3 then
      local lang = (info:match("^([%w_+%-.]*)") or ""):lower()
      local body, j, closed = {}, i + 1, false
      while j <= #lines do
        local f = lines[j]:match("^%s*(" .. fence:sub(1, 1):gsub("%p", "%%%0") .. "+)%s*$")
        if f and #f >= #fence then closed = true; break end
        body[#body + 1] = lines[j]
        j = j + 1
      end
      out[#out + 1] = { lang = lang, code = table.concat(body, "\n") .. "\n", unterminated = not closed }
      i = j + 1
    else
      i = i + 1
    end
  end
  return out
end

-- The most heap a block's loading may take: it runs in this process (a model's reply is
-- hostile), under the candidate sandbox's step limit and this cap.
M.LOAD_HEAP_BYTES = 64 * 1024 * 1024

-- Whether a Lua block loads as a kreach candidate (kreach.candidate.lua.load_text, named "the
-- block"): true, or false and the loader's message.
local function loads_lua(code)
  collectgarbage()
  local before = util.heap_limit(util.heap_used() + M.LOAD_HEAP_BYTES)
  local ok, err = pcall(candidate.load_text, code, "the block")
  util.heap_limit(before)
  collectgarbage()
  if ok then return true end
  local msg = candidate.is_error(err) and err.msg or tostring(err)
  if msg:find("not enough memory", 1, true) then
    msg = ("the block: loading it asked for more than %d MiB"):format(M.LOAD_HEAP_BYTES // 2 ^ 20)
  end
  return false, msg
end

-- Whether a Python block can be a KernelBench candidate: it defines ModelNew.
local function loads_python(code)
  if code:match("\nclass%s+ModelNew%s*[%(:]") or code:match("^class%s+ModelNew%s*[%(:]") then return true end
  return false, "the block defines no class ModelNew"
end

-- candidate(text, format) -> { code =, lang =, index = (of the blocks), blocks = (how many), unterminated = }
-- or nil, reason ("no_code": no block in the language; "no_candidate": blocks, none loads) and
-- the last block's loading error. format: "lua" (kreach's) or "python" (KernelBench's).
function M.candidate(text, format)
  local langs = M.LANGS[format]
  if not langs then error(("extract: unknown format '%s' (lua, python)"):format(tostring(format)), 2) end
  local all = M.blocks(text or "")
  local why
  local seen = 0
  for k = #all, 1, -1 do
    local b = all[k]
    if langs[b.lang] then
      seen = seen + 1
      local ok, err
      if format == "lua" then ok, err = loads_lua(b.code) else ok, err = loads_python(b.code) end
      if ok then return { code = b.code, lang = b.lang, index = k, blocks = #all, unterminated = b.unterminated } end
      why = why or err
    end
  end
  if seen == 0 then return nil, "no_code", ("the reply has no %s code block"):format(format == "lua" and "Lua" or "Python") end
  return nil, "no_candidate", why
end

return M
