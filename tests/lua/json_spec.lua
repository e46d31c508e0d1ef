-- kreach.json: the one codec of kreach's outputs. Exact numbers, sorted keys, standard JSON
-- for outputs (non-finite numbers as strings), bare tokens for what kreach reads back itself.
local json = require "kreach.json"

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
end)
