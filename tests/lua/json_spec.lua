-- kreach.json: the one codec of kreach's outputs. Exact numbers, sorted keys, standard JSON
-- for outputs (non-finite numbers as strings), bare tokens for what kreach reads back itself.
-- Known answers for escaped keys, \u escapes and -0.0; then the round trip as a property over
-- random values (its seed printed; KREACH_SEED repeats it), with lua-cjson as a second reader.
local json = require "kreach.json"
local cjson = require "cjson"
local support = require "support"

describe("kreach.json", function()
  it("writes sorted keys, exact integers and the shortest exact doubles", function()
    assert.equals('{"a":1,"b":[1,2.5,"x"],"c":{"d":true,"e":false}}',
      json.encode({ c = { e = false, d = true }, a = 1, b = { 1, 2.5, "x" } }))
    assert.equals("0.1", json.encode(0.1))
    assert.equals("1.0", json.encode(1.0))
    assert.equals("9007199254740993", json.encode(9007199254740993))
    local x = 2 / 3
    assert.equals(x, json.decode(json.encode(x)))
    assert.equals("integer", math.type(json.decode("3")))
    assert.equals("float", math.type(json.decode("3.0")))
  end)

  it("writes non-finite numbers as strings in outputs, as bare tokens when asked, and reads both", function()
    assert.equals('{"a":"NaN","b":"Infinity","c":"-Infinity"}', json.encode({ a = 0 / 0, b = math.huge, c = -math.huge }))
    assert.equals('{"a":NaN,"b":Infinity,"c":-Infinity}',
      json.encode({ a = 0 / 0, b = math.huge, c = -math.huge }, { nonfinite = "token" }))
    local t = json.decode('{"a":NaN,"b":-Infinity,"c":"NaN"}')
    assert.is_true(t.a ~= t.a)
    assert.equals(-math.huge, t.b)
    assert.equals("NaN", t.c) -- a string stays a string
    assert.has_error(function() json.encode(1, { nonfinite = "null" }) end)
  end)

  it("writes an empty table as {}, and one marked as an array as []", function()
    assert.equals('{"a":{},"b":[]}', json.encode({ a = {}, b = json.array() }))
    assert.equals('[1,2]', json.encode(json.array({ 1, 2 })))
  end)

  it("escapes control characters and quotes, and writes null", function()
    assert.equals('"a\\"b\\n\\u0001"', json.encode('a"b\n\1'))
    assert.equals('{"x":null}', json.encode({ x = json.null }))
    assert.has_error(function() json.encode({ f = print }) end)
    local cyc = {}
    cyc.self = cyc
    assert.has_error(function() json.encode(cyc) end)
  end)

  it("gives a canonical text for hashing: sorted keys, an integral float as the integer", function()
    assert.equals(json.canonical({ x = 1 }), json.canonical({ x = 1.0 }))
    assert.equals('{"a":1,"b":[1,2,{"c":true}],"d":"x\\"y"}', json.canonical({ d = 'x"y', b = { 1, 2, { c = true } }, a = 1 }))
  end)

  it("escapes object keys as it escapes strings: quotes, backslashes, newlines, control characters", function()
    -- each key, the exact text written, and the same text read back gives the key again
    local cases = {
      { 'a"b', '{"a\\"b":1}' },
      { "a\\b", '{"a\\\\b":1}' },
      { "a\nb", '{"a\\nb":1}' },
      { "\r\t\b\f", '{"\\r\\t\\b\\f":1}' },
      { "\0\1\31\127", '{"\\u0000\\u0001\\u001f\\u007f":1}' },
      { '\\"', '{"\\\\\\"":1}' },
      { "", '{"":1}' },
      { "é😀/", '{"é😀/":1}' },
    }
    for _, c in ipairs(cases) do
      local key, text = c[1], c[2]
      assert.equals(text, json.encode({ [key] = 1 }))
      assert.same({ [key] = 1 }, json.decode(text))
      assert.same({ [key] = 1 }, cjson.decode(text)) -- standard JSON, as another reader sees it
    end
    -- nested, sorted by the raw key, in both non-finite modes
    local t = { ['q"'] = { ["b\\"] = { ["\n"] = "v\n" } }, ["\1"] = 2 }
    local text = '{"\\u0001":2,"q\\"":{"b\\\\":{"\\n":"v\\n"}}}'
    assert.equals(text, json.encode(t))
    assert.equals(text, json.encode(t, { nonfinite = "token" }))
    assert.same(t, json.decode(text))
    -- a key that would end the string early, were it written raw, cannot inject a member
    local evil = 'x":1,"y'
    assert.same({ [evil] = 2 }, json.decode(json.encode({ [evil] = 2 })))
  end)

  it("reads \\u escapes, surrogate pairs as one character outside the BMP, and \\/", function()
    assert.equals("😀", json.decode('"\\uD83D\\uDE00"'))
    assert.equals("😀", json.decode('"\\ud83d\\ude00"'))
    assert.equals(utf8.char(0x10FFFF), json.decode('"\\uDBFF\\uDFFF"'))
    assert.equals(utf8.char(0x10000), json.decode('"\\uD800\\uDC00"'))
    assert.equals("aé€\0/", json.decode('"\\u0061\\u00e9\\u20AC\\u0000\\/"'))
    assert.same({ ["😀k"] = "😀" }, json.decode('{"\\uD83D\\uDE00k":"\\uD83D\\uDE00"}'))
  end)

  it("refuses a \\u escape that is not four hex digits, naming the byte", function()
    for _, bad in ipairs({ [["\u-001"]], [["\u 41 "]], [["\u+041"]], [["\u12"]], [["\u12G4"]] }) do
      local ok, err = pcall(json.decode, bad)
      assert.is_false(ok, bad)
      assert.matches("^json: bad \\u escape at byte 2$", err, 1, false, bad)
    end
    -- a high surrogate followed by a malformed \u: the second escape is refused on its own
    local ok, err = pcall(json.decode, [["\ud83d\u+e00"]])
    assert.is_false(ok)
    assert.matches("^json: bad \\u escape at byte 8$", err)
  end)

  it("keeps -0.0 a negative zero, and integers and floats apart", function()
    assert.equals("-0.0", json.encode(-0.0))
    local z = json.decode("-0.0")
    assert.equals("float", math.type(z))
    assert.equals(-math.huge, 1 / z)
    z = json.decode(json.encode({ -0.0 }, { nonfinite = "token" }))[1]
    assert.equals(-math.huge, 1 / z)
    assert.equals(-math.huge, 1 / json.decode("-0e0"))
    assert.equals(math.huge, 1 / json.decode("0.0"))
    assert.equals("0", json.encode(0))
    assert.equals("integer", math.type(json.decode("-0")))
    for _, x in ipairs({ math.maxinteger, math.mininteger, 0, -1, (1 << 53) + 1 }) do
      local back = json.decode(json.encode(x))
      assert.equals("integer", math.type(back))
      assert.equals(x, back)
    end
    for _, x in ipairs({ 2.0 ^ 63, -2.0 ^ 63, 2.0 ^ 53, 1e300, 5e-324, 2.2250738585072014e-308,
                         1.7976931348623157e308, 0.1, 1 / 3, 123456789012345.0 }) do
      local back = json.decode(json.encode(x))
      assert.equals("float", math.type(back))
      assert.equals(string.pack("<d", x), string.pack("<d", back))
    end
  end)
end)

-- ---- the round trip as a property: random values, printed seed (KREACH_SEED repeats it) ----

local function float_of_bits(bits) return (string.unpack("<d", string.pack("<i8", bits))) end

-- A Lua literal for a value (floats to the bit with %a), for a failure's message.
local function show(v, depth)
  depth = depth or 0
  local t = type(v)
  if t == "string" then return ("%q"):format(v):gsub("\n", "n") end
  if t == "number" then
    if math.type(v) == "integer" then return tostring(v) end
    if v ~= v then return "0/0" end
    return ("%a"):format(v)
  end
  if t ~= "table" then return tostring(v) end
  if depth > 8 then return "{...}" end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  local out = {}
  for _, k in ipairs(keys) do out[#out + 1] = ("[%s]=%s"):format(show(k), show(v[k], depth + 1)) end
  return "{" .. table.concat(out, ",") .. "}"
end

-- nil when a and b are the same JSON value to the bit (NaN equal to NaN, -0.0 not 0.0, an
-- integer not a float), else where and how they differ.
local function differ(a, b, path)
  path = path or "$"
  if type(a) ~= type(b) then return ("%s: %s vs %s"):format(path, show(a), show(b)) end
  if type(a) == "number" then
    if math.type(a) ~= math.type(b) then return ("%s: %s %s vs %s %s"):format(path, math.type(a), show(a), math.type(b), show(b)) end
    if math.type(a) == "integer" then return a ~= b and ("%s: %d vs %d"):format(path, a, b) or nil end
    if a ~= a and b ~= b then return nil end
    if string.pack("<d", a) ~= string.pack("<d", b) then return ("%s: %a vs %a"):format(path, a, b) end
    return nil
  end
  if type(a) == "table" then
    for k, v in pairs(a) do
      local d = differ(v, b[k], path .. "[" .. show(k) .. "]")
      if d then return d end
    end
    for k in pairs(b) do
      if a[k] == nil then return ("%s[%s]: absent vs %s"):format(path, show(k), show(b[k])) end
    end
    return nil
  end
  if a ~= b then return ("%s: %s vs %s"):format(path, show(a), show(b)) end
  return nil
end

-- what the value reads back as after encoding with nonfinite = "string": the strings
local function nonfinite_as_strings(v)
  if type(v) == "number" then
    if v ~= v then return "NaN" end
    if v == math.huge then return "Infinity" end
    if v == -math.huge then return "-Infinity" end
    return v
  end
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = nonfinite_as_strings(x) end
  return t
end

local function generators(rand)
  local function bits(n) return rand(1 << n) - 1 end -- n <= 30 random bits
  local function any64() return (bits(22) << 42) | (bits(21) << 21) | bits(21) end

  local SPECIAL_CHARS = { '"', "\\", "/", "\n", "\r", "\t", "\b", "\f", "\0", "\1", "\31", "\127", "'", "u", "\\u" }
  local function char()
    local r = rand(8)
    if r == 1 then return SPECIAL_CHARS[rand(#SPECIAL_CHARS)] end
    if r == 2 then return string.char(rand(32) - 1) end                   -- a control character
    if r == 3 then return utf8.char(0x80 + rand(0x800 - 0x80) - 1) end   -- two bytes
    if r == 4 then                                                        -- three, no surrogate
      local cp = 0x800 + rand(0x10000 - 0x800) - 1
      if cp >= 0xD800 and cp <= 0xDFFF then cp = cp + 0x800 end
      return utf8.char(cp)
    end
    if r == 5 then return utf8.char(0x10000 + rand(0x110000 - 0x10000) - 1) end -- outside the BMP
    return string.char(31 + rand(96))                                      -- printable ASCII
  end
  local function str()
    local out = {}
    for i = 1, rand(10) - 1 do out[i] = char() end
    return table.concat(out)
  end

  local FLOATS = { 0.0, -0.0, 1.0, -1.0, 0.1, 0.5, 2.0 ^ 53, 2.0 ^ 63, -2.0 ^ 63, 2.0 ^ 64, 1e300, 5e-324,
                   -5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
                   -1.7976931348623157e308, 1e16, 1e21, 1e-7, 123456789012345.0, 9007199254740993.0 }
  local INTS = { 0, 1, -1, math.maxinteger, math.mininteger, 1 << 53, (1 << 53) + 1, 1000000000000000, -(1 << 62) }
  local function number(finite_only)
    local r = rand(10)
    if r == 1 then return FLOATS[rand(#FLOATS)] end
    if r == 2 then return INTS[rand(#INTS)] end
    if r == 3 then return any64() end                                   -- any integer
    if r == 4 then return rand(2001) - 1001 end                         -- a small one
    if r == 5 then return float_of_bits(bits(21)) * ((rand(2) == 1) and 1 or -1) end -- subnormal
    if r == 6 then return (rand(2 ^ 20) - 2 ^ 19) * 1.0 end               -- an integral float
    if r == 7 and not finite_only then
      local nf = { 0 / 0, math.huge, -math.huge }
      return nf[rand(3)]
    end
    while true do                                                       -- any finite bit pattern
      local b = any64()
      if (b >> 52) & 0x7ff ~= 0x7ff then return float_of_bits(b) end
    end
  end

  local function value(depth, finite_only)
    local r = rand(depth >= 4 and 4 or 7)
    if r == 1 then return str() end
    if r == 2 then return number(finite_only) end
    if r == 3 then return rand(2) == 1 end
    if r == 4 then return number(finite_only) end
    if r == 5 or r == 6 then                                             -- an object
      local t = {}
      for _ = 1, rand(5) - 1 do t[str()] = value(depth + 1, finite_only) end
      return t
    end
    local t = {}                                                         -- an array
    for i = 1, rand(5) do t[i] = value(depth + 1, finite_only) end
    return t
  end
  return { value = value, str = str, number = number }
end

-- Another writer of the same value: every string character written raw, with a short escape
-- or as \u (uppercase or lowercase hex; outside the BMP as a surrogate pair), whitespace
-- between the tokens. Numbers as json.encode writes them, non-finite ones as bare tokens.
local function other_writer(rand)
  local SHORT = { ['"'] = '\\"', ["\\"] = "\\\\", ["/"] = "\\/", ["\b"] = "\\b", ["\f"] = "\\f",
                  ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t" }
  local function hex4(u) return (rand(2) == 1 and "\\u%04X" or "\\u%04x"):format(u) end
  local function string_text(s)
    local out = { '"' }
    for _, cp in utf8.codes(s) do
      local c = utf8.char(cp)
      local r = rand(3)
      local must = cp < 0x20 or c == '"' or c == "\\"
      if r == 1 and not must then
        out[#out + 1] = c
      elseif r == 2 and SHORT[c] then
        out[#out + 1] = SHORT[c]
      elseif cp >= 0x10000 then
        local v = cp - 0x10000
        out[#out + 1] = hex4(0xD800 + (v >> 10)) .. hex4(0xDC00 + (v & 0x3FF))
      else
        out[#out + 1] = hex4(cp)
      end
    end
    out[#out + 1] = '"'
    return table.concat(out)
  end
  local WS = { "", "", " ", "\n", "\t ", "\r\n" }
  local function ws() return WS[rand(#WS)] end
  local function write(v)
    if type(v) == "string" then return string_text(v) end
    if type(v) ~= "table" then return json.encode(v, { nonfinite = "token" }) end
    local parts = {}
    if #v > 0 then
      for i = 1, #v do parts[i] = ws() .. write(v[i]) .. ws() end
      return "[" .. table.concat(parts, ",") .. "]"
    end
    for k, x in pairs(v) do parts[#parts + 1] = ws() .. string_text(k) .. ws() .. ":" .. ws() .. write(x) .. ws() end
    return "{" .. table.concat(parts, ",") .. ws() .. "}"
  end
  return write
end

describe("kreach.json's round trip (a property)", function()
  it("gives back every value to the bit: escaped keys and strings, -0.0, exact doubles, integers, non-finite tokens", function()
    local seed = support.seed("json round trip")
    local rand = support.rng(seed)
    local gen = generators(rand)
    local write = other_writer(rand)
    local function check(ok, what, v, text)
      assert(ok, ("seed %d: %s\nvalue: %s\ntext: %s"):format(seed, what, show(v), tostring(text)))
    end
    for _ = 1, 400 do
      local v = gen.value(0, false)
      -- as the store and the worker write: non-finite numbers as bare tokens, read back as numbers
      local text = json.encode(v, { nonfinite = "token" })
      local ok, back = pcall(json.decode, text)
      check(ok, "token text does not read back: " .. tostring(back), v, text)
      local d = differ(v, back)
      check(not d, "token round trip differs at " .. tostring(d), v, text)
      -- the same text written again: one value, one text
      check(json.encode(back, { nonfinite = "token" }) == text, "not the same text again", v, text)
      -- as every output writes: standard JSON (another reader takes it) with non-finite numbers
      -- as the strings "NaN", "Infinity", "-Infinity"
      local stext = json.encode(v)
      ok, back = pcall(json.decode, stext)
      check(ok, "string text does not read back: " .. tostring(back), v, stext)
      d = differ(nonfinite_as_strings(v), back)
      check(not d, "string round trip differs at " .. tostring(d), v, stext)
      local cok, cback = pcall(cjson.decode, stext)
      check(cok, "cjson does not read it: " .. tostring(cback), v, stext)
      check(type(v) ~= "string" or cback == v, "cjson reads another string", v, stext)
      if type(v) == "table" and next(v) ~= nil and #v == 0 then
        for k in pairs(v) do check(cback[k] ~= nil, "cjson misses key " .. show(k), v, stext) end
      end
      -- what another writer makes of the same value (\u escapes, surrogate pairs, whitespace)
      local otext = write(v)
      ok, back = pcall(json.decode, otext)
      check(ok, "the other writer's text does not read back: " .. tostring(back), v, otext)
      d = differ(v, back)
      check(not d, "the other writer's text differs at " .. tostring(d), v, otext)
    end
    -- random bit patterns of finite doubles, alone and in arrays, bit-exact as floats
    for _ = 1, 2000 do
      local x = gen.number(true)
      local back = json.decode(json.encode(x))
      check(math.type(back) == math.type(x), ("%s came back as %s"):format(math.type(x), math.type(back)), x, json.encode(x))
      if math.type(x) == "float" then
        check(string.pack("<d", back) == string.pack("<d", x), "not the same bits", x, json.encode(x))
        if x == 0 then check(1 / back == 1 / x, "the sign of zero was lost", x, json.encode(x)) end
      else
        check(back == x, "not the same integer", x, json.encode(x))
      end
    end
  end)
end)

-- ---- valid UTF-8 whatever a string holds (a candidate's Latin-1 error message) ----

describe("kreach.json's output is valid UTF-8", function()
  local REPL = "\xEF\xBF\xBD"
  it("writes each byte that begins no well-formed sequence as U+FFFD, in values and keys", function()
    assert.equals('"caf' .. REPL .. '"', json.encode("caf\233"))
    assert.equals('{"k' .. REPL .. '":"' .. REPL .. REPL .. 'x"}', json.encode({ ["k\255"] = "\192\128x" }))
    -- truncated sequences, overlong forms, code points past U+10FFFF, stray continuation bytes
    for _, bad in ipairs({ "\xE2\x82", "\xF0\x9F\x98", "\xC0\xAF", "\xE0\x80\xAF", "\xF4\x90\x80\x80",
                           "\xF5\x80\x80\x80", "\x80", "a\xBFb", "\xC2" }) do
      local t = json.encode(bad)
      assert.truthy(utf8.len(t), t)
      assert.truthy(cjson.decode(t))
      assert.equals(t, json.encode(json.decode(t)), "one value, one text")
    end
    assert.equals('"' .. REPL .. REPL .. '"', json.encode("\xE2\x82"))
    -- valid UTF-8 around the bad bytes is kept
    assert.equals('"é' .. REPL .. '😀"', json.encode("é\233😀"))
  end)

  it("keeps valid UTF-8 as it is; a lone surrogate reads back from the store's text, not in outputs", function()
    assert.equals('"aé€😀\xC2\x85"', json.encode("aé€😀\xC2\x85"))
    local lone = json.decode('"x\\ud800y\\udfffz"')
    local tok = json.encode(lone, { nonfinite = "token" })
    assert.equals('"x\\ud800y\\udfffz"', tok)
    assert.equals(lone, json.decode(tok))
    local out = json.encode(lone)
    assert.equals('"x' .. REPL:rep(3) .. 'y' .. REPL:rep(3) .. 'z"', out)
    assert.truthy(cjson.decode(out))
  end)

  it("holds for random bytes: valid UTF-8 that cjson reads, and the same text again (a property)", function()
    local seed = support.seed("json utf-8")
    local rand = support.rng(seed)
    for _ = 1, 500 do
      local b = {}
      for i = 1, rand(12) do b[i] = string.char(rand(256) - 1) end
      local s = table.concat(b)
      local t = json.encode({ [s] = s })
      local msg = ("seed %d: %q -> %q"):format(seed, s, t)
      assert(utf8.len(t), msg)
      assert(cjson.decode(t), msg)
      assert(json.encode(json.decode(t)) == t, msg)
      if utf8.len(s) then assert(json.decode(t)[s] == s, msg) end
      local tk = json.encode(s, { nonfinite = "token" })
      assert(utf8.len(tk) and json.encode(json.decode(tk), { nonfinite = "token" }) == tk, msg)
    end
  end)
end)
