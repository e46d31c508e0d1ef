-- kreach.json: the one JSON codec of kreach's outputs (every --json, results exports, the
-- results store's columns, the worker's protocol). docs/results.md, "JSON".
--
-- Debian's lua-cjson (2.1.0) writes 14 significant digits and reads every number as a float,
-- so timing samples and integers would not come back as they went in. This codec is exact:
-- integers stay integers, floats are written with the fewest digits that read back to the same
-- double (and always with a '.' or an exponent), objects have sorted keys (the same value, the
-- same text). Non-finite numbers, which standard JSON cannot hold, are written as the strings
-- "NaN", "Infinity" and "-Infinity" in every output (nonfinite = "string", the default); the
-- store and the worker's protocol, which kreach itself reads back, write them as the bare
-- tokens NaN, Infinity and -Infinity (nonfinite = "token", what Python's json module also
-- reads), and the decoder reads both the tokens and standard JSON. A null decodes to nil (an
-- absent key; a hole in an array). An empty table is written as {}; json.array(t) marks one to
-- be written as [] when empty. Every text written is valid UTF-8: a string's bytes that are not
-- (a Latin-1 "caf\xE9" in a candidate's error) are each written as U+FFFD; see encode_string.
local json = {}

local ESC = { ['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n',
              ['\r'] = '\\r', ['\t'] = '\\t' }
local function esc_char(c) return ESC[c] or ("\\u%04x"):format(c:byte()) end

-- Strings are written as valid UTF-8 whatever bytes they hold (a candidate's error message may
-- be Latin-1). A string that is valid UTF-8 passes as it is (the fast path: one utf8.len). In
-- one that is not, each byte that does not begin a well-formed sequence is written as U+FFFD
-- (the replacement character, as its three UTF-8 bytes). The 3-byte form of a surrogate code
-- point (U+D800..U+DFFF: not UTF-8, but what the decoder makes of a lone "\ud800" escape, which
-- Python's json module writes for a surrogate-escaped byte) is written as its \u escape where
-- kreach reads the text back itself (nonfinite = "token": the store, the worker's protocol), so
-- that the string reads back as it was; in outputs, which strict readers (lua-cjson, serde)
-- refuse a lone surrogate escape in, its bytes are invalid bytes like any other.
local tokens -- true while encoding with nonfinite = "token"

local REPLACEMENT = "\xEF\xBF\xBD"
local sbyte, ssub, sfind = string.byte, string.sub, string.find

local function utf8_repaired(s, surrogates)
  local out, n, i, len = {}, 0, 1, #s
  while i <= len do
    local j = sfind(s, "[\x80-\xFF]", i)
    if not j then n = n + 1; out[n] = ssub(s, i); break end
    if j > i then n = n + 1; out[n] = ssub(s, i, j - 1) end
    local b1, b2, b3, b4 = sbyte(s, j, j + 3)
    local size, lo, hi = 0, 0x80, 0xBF
    if b1 >= 0xC2 and b1 <= 0xDF then size = 2
    elseif b1 >= 0xE0 and b1 <= 0xEF then
      size = 3
      if b1 == 0xE0 then lo = 0xA0 end
    elseif b1 >= 0xF0 and b1 <= 0xF4 then
      size = 4
      if b1 == 0xF0 then lo = 0x90 elseif b1 == 0xF4 then hi = 0x8F end
    end
    if b1 == 0xED and not surrogates then hi = 0x9F end
    local ok = size > 0 and b2 and b2 >= lo and b2 <= hi
    if ok and size >= 3 then ok = b3 and b3 >= 0x80 and b3 <= 0xBF end
    if ok and size == 4 then ok = b4 and b4 >= 0x80 and b4 <= 0xBF end
    if not ok then
      n = n + 1; out[n] = REPLACEMENT
      i = j + 1
    elseif b1 == 0xED and b2 >= 0xA0 then -- a surrogate code point: its escape
      n = n + 1; out[n] = ("\\u%04x"):format(((b1 & 0x0F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F))
      i = j + 3
    else
      n = n + 1; out[n] = ssub(s, j, j + size - 1)
      i = j + size
    end
  end
  return table.concat(out, "", 1, n)
end

-- The JSON text of a string, quotes included.
local function encode_string(v)
  local s = v:gsub('[%c"\\]', esc_char)
  if not utf8.len(s) then s = utf8_repaired(s, tokens) end
  return '"' .. s .. '"'
end

local function encode_number(x)
  if math.type(x) == "integer" then return ("%d"):format(x) end
  if x ~= x then return tokens and "NaN" or '"NaN"' end
  if x == math.huge then return tokens and "Infinity" or '"Infinity"' end
  if x == -math.huge then return tokens and "-Infinity" or '"-Infinity"' end
  local s = ("%.15g"):format(x)
  if tonumber(s) ~= x then
    s = ("%.16g"):format(x)
    if tonumber(s) ~= x then s = ("%.17g"):format(x) end
  end
  if not s:find("[%.eEn]") then s = s .. ".0" end
  return s
end

local ARRAY = setmetatable({}, { __mode = "k" }) -- tables marked by json.array

-- array(t) -> t, marked to be written as a JSON array, [] when empty.
function json.array(t)
  t = t or {}
  ARRAY[t] = true
  return t
end

local encode_value
local function encode_table(t, out, depth)
  if depth > 200 then error("json.encode: tables nested too deep (a cycle?)", 0) end
  if ARRAY[t] and next(t) == nil then out[#out + 1] = "[]"; return end
  local n, count, array = #t, 0, true
  for k in pairs(t) do
    count = count + 1
    if math.type(k) ~= "integer" or k < 1 or k > n then array = false end
  end
  if array and count == n and n > 0 then
    out[#out + 1] = "["
    for i = 1, n do
      if i > 1 then out[#out + 1] = "," end
      encode_value(t[i], out, depth + 1)
    end
    out[#out + 1] = "]"
    return
  end
  local keys = {}
  for k in pairs(t) do
    local tk = type(k)
    if tk ~= "string" and tk ~= "number" then
      error(("json.encode: a %s key cannot be written"):format(tk), 0)
    end
    keys[#keys + 1] = tostring(k)
  end
  table.sort(keys)
  out[#out + 1] = "{"
  for i, k in ipairs(keys) do
    if i > 1 then out[#out + 1] = "," end
    out[#out + 1] = encode_string(k) .. ":"
    local v = t[k]
    if v == nil then v = t[math.tointeger(tonumber(k)) or tonumber(k)] end
    encode_value(v, out, depth + 1)
  end
  out[#out + 1] = "}"
end

-- null: written as null (cjson.null where cjson is there, so that values from cjson pass)
json.null = (function() local ok, cj = pcall(require, "cjson"); return ok and cj.null or nil end)()
local cjson_null = json.null or false

encode_value = function(v, out, depth)
  local tv = type(v)
  if tv == "string" then
    out[#out + 1] = encode_string(v)
  elseif tv == "number" then
    out[#out + 1] = encode_number(v)
  elseif tv == "boolean" then
    out[#out + 1] = v and "true" or "false"
  elseif tv == "nil" or (tv == "userdata" and v == cjson_null) then
    out[#out + 1] = "null"
  elseif tv == "table" then
    encode_table(v, out, depth)
  else
    error(("json.encode: a %s cannot be written"):format(tv), 0)
  end
end

-- encode(value, opts) -> string. opts.nonfinite: "string" (default) or "token". Raises on
-- functions, userdata other than cjson.null, and cycles.
function json.encode(v, opts)
  local mode = opts and opts.nonfinite or "string"
  if mode ~= "string" and mode ~= "token" then error("json.encode: nonfinite is 'string' or 'token'", 2) end
  local out = {}
  tokens = mode == "token"
  local ok, err = pcall(encode_value, v, out, 0)
  tokens = nil
  if not ok then error(err, 0) end
  return table.concat(out)
end

local UNESC = { ['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t' }
local find, sub, byte = string.find, string.sub, string.byte

-- decode(string) -> value. Raises "json: <what> at byte N" on malformed text.
function json.decode(s)
  local pos = 1
  local function fail(what) error(("json: %s at byte %d"):format(what, pos), 0) end
  local function ws() pos = find(s, "[^ \t\r\n]", pos) or #s + 1 end
  local value

  local function str()
    local i, parts, np = pos + 1, nil, 0
    while true do
      local j = find(s, '["\\]', i)
      if not j then fail("unterminated string") end
      if byte(s, j) == 34 then
        pos = j + 1
        if not parts then return sub(s, i, j - 1) end
        parts[np + 1] = sub(s, i, j - 1)
        return table.concat(parts, "", 1, np + 1)
      end
      parts = parts or {}
      np = np + 1
      parts[np] = sub(s, i, j - 1)
      local c = sub(s, j + 1, j + 1)
      if c == "u" then
        local hex = sub(s, j + 2, j + 5)
        local cp = hex:find("^%x%x%x%x$") and tonumber(hex, 16)
        if not cp then pos = j; fail("bad \\u escape") end
        i = j + 6
        if cp >= 0xD800 and cp <= 0xDBFF and sub(s, i, i + 1) == "\\u" then
          local lhex = sub(s, i + 2, i + 5)
          local lo = lhex:find("^%x%x%x%x$") and tonumber(lhex, 16)
          if lo and lo >= 0xDC00 and lo <= 0xDFFF then
            cp = 0x10000 + (cp - 0xD800) * 0x400 + (lo - 0xDC00)
            i = i + 6
          end
        end
        np = np + 1
        parts[np] = utf8.char(cp)
      else
        local r = UNESC[c]
        if not r then pos = j; fail("bad escape") end
        np = np + 1
        parts[np] = r
        i = j + 2
      end
    end
  end

  local function number()
    local a, b = find(s, "^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
    if not a then
      if sub(s, pos, pos + 8) == "-Infinity" then pos = pos + 9; return -math.huge end
      fail("unexpected character")
    end
    local tok = sub(s, a, b)
    local x = tonumber(tok)
    if not x then fail("bad number '" .. tok .. "'") end
    pos = b + 1
    if not find(tok, "[%.eE]") then return math.tointeger(x) or x end
    return x -- a float already (x + 0.0 would turn -0.0 into 0.0)
  end

  value = function(depth)
    if depth > 200 then fail("nested too deep") end
    ws()
    local c = byte(s, pos)
    if c == 123 then -- {
      pos = pos + 1
      local t = {}
      ws()
      if byte(s, pos) == 125 then pos = pos + 1; return t end
      while true do
        ws()
        if byte(s, pos) ~= 34 then fail("expected a key") end
        local k = str()
        ws()
        if byte(s, pos) ~= 58 then fail("expected ':'") end
        pos = pos + 1
        t[k] = value(depth + 1)
        ws()
        c = byte(s, pos)
        pos = pos + 1
        if c == 125 then return t end
        if c ~= 44 then pos = pos - 1; fail("expected ',' or '}'") end
      end
    elseif c == 91 then -- [
      pos = pos + 1
      local t, n = {}, 0
      ws()
      if byte(s, pos) == 93 then pos = pos + 1; return t end
      while true do
        n = n + 1
        t[n] = value(depth + 1)
        ws()
        c = byte(s, pos)
        pos = pos + 1
        if c == 93 then return t end
        if c ~= 44 then pos = pos - 1; fail("expected ',' or ']'") end
      end
    elseif c == 34 then
      return str()
    elseif c == 116 and sub(s, pos, pos + 3) == "true" then pos = pos + 4; return true
    elseif c == 102 and sub(s, pos, pos + 4) == "false" then pos = pos + 5; return false
    elseif c == 110 and sub(s, pos, pos + 3) == "null" then pos = pos + 4; return nil
    elseif c == 78 and sub(s, pos, pos + 2) == "NaN" then pos = pos + 3; return 0 / 0
    elseif c == 73 and sub(s, pos, pos + 7) == "Infinity" then pos = pos + 8; return math.huge
    elseif c == nil then fail("unexpected end")
    end
    return number()
  end

  if type(s) ~= "string" then error("json.decode: string expected, got " .. type(s), 2) end
  local v = value(0)
  ws()
  if pos <= #s then fail("trailing characters") end
  return v
end

-- ---- canonical text for hashing: the same table always gives the same text (keys sorted;
-- an integral float written as the integer, so that 1 and 1.0 hash alike) ----

local function canonical(v, out)
  local t = type(v)
  if t == "table" then
    local n = #v
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    if n > 0 and #keys == n then
      out[#out + 1] = "["
      for i = 1, n do
        if i > 1 then out[#out + 1] = "," end
        canonical(v[i], out)
      end
      out[#out + 1] = "]"
    else
      table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
      out[#out + 1] = "{"
      for i, k in ipairs(keys) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = ("%q:"):format(tostring(k))
        canonical(v[k], out)
      end
      out[#out + 1] = "}"
    end
  elseif t == "number" then
    out[#out + 1] = math.type(v) == "integer" and tostring(v) or ("%.17g"):format(v)
  elseif t == "string" then
    out[#out + 1] = ("%q"):format(v)
  elseif t == "boolean" or t == "nil" then
    out[#out + 1] = tostring(v)
  else
    error("canonical: cannot encode a " .. t, 0)
  end
end

function json.canonical(v)
  local out = {}
  canonical(v, out)
  return table.concat(out)
end

return json
