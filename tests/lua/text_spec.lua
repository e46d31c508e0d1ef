-- kreach.text: untrusted strings made safe for terminals, the database and exports.
local text = require "kreach.text"

describe("kreach.text.clean", function()
  it("makes terminal control characters visible, keeping tabs and newlines", function()
    local fake = "compile failed\r\27[1A\27[2Kok"
    local c = text.clean(fake)
    assert.equals("compile failed\\x0d\\x1b[1A\\x1b[2Kok", c)
    assert.is_nil(c:find("[\r\27]"))
    assert.equals("a\tb\nc", text.clean("a\tb\nc"))
    assert.equals("x\\x00y\\x7f", text.clean("x\0y\127"))
    -- C1 controls in UTF-8 (U+009B is a CSI introducer); other UTF-8 passes
    assert.equals("\\u009b31m", text.clean("\xC2\x9B31m"))
    assert.equals("café ü", text.clean("café ü"))
  end)

  it("makes bidirectional controls visible: a right-to-left override cannot reorder a line", function()
    assert.equals("x.lua: \\u202eko :tcidrev", text.clean("x.lua: \u{202E}ko :tcidrev"))
    local all = { 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069, 0x061C }
    for _, cp in ipairs(all) do
      assert.equals(("a\\u%04xb"):format(cp), text.clean("a" .. utf8.char(cp) .. "b"), ("U+%04X"):format(cp))
    end
    -- their neighbours are text: dashes, quotes, the ellipsis, a zero-width joiner, Arabic letters
    local kept = "a\u{2014}b \u{201C}q\u{201D} \u{2026} \u{200D} \u{2070} \u{061B}\u{0627}"
    assert.equals(kept, text.clean(kept))
  end)

  it("bounds a string, says how much it cut, and does not split a UTF-8 sequence", function()
    local c = text.clean(("a"):rep(100), 10)
    assert.equals(("a"):rep(10) .. "... (90 more bytes not shown)", c)
    assert.equals("... (4 more bytes not shown)", text.clean("é" .. "bb", 1))
    local big = text.clean(("x"):rep(text.MAX_BYTES * 4))
    assert.is_true(#big < text.MAX_BYTES + 64)
    assert.is_nil(text.clean(nil))
    assert.equals("12", text.clean(12))
  end)

  it("cleans every string of a nested table, keys included", function()
    local t = text.clean_all({ reason = "\27[2Kx", list = { "\r", 3 }, ["k\27"] = true })
    assert.equals("\\x1b[2Kx", t.reason)
    assert.same({ "\\x0d", 3 }, t.list)
    assert.is_true(t["k\\x1b"])
  end)
end)

describe("kreach.text.continued and one_line", function()
  it("mark a reason's later lines, so that none passes for a verdict line", function()
    local reason = "x.lua:3: boom\nx.lua: ok (dry run: 1 launch of f; compiled for sm_90)\r\n  y.lua: correct"
    assert.equals("x.lua:3: boom\n  | x.lua: ok (dry run: 1 launch of f; compiled for sm_90)\n  |   y.lua: correct",
      text.continued(reason, "  "))
    assert.equals("one line", text.continued("one line", "  "))
    assert.equals("a\n| b", text.continued("a\nb"))
    assert.equals("a | b |  c", text.one_line("a\nb\r\n c"))
  end)
end)

describe("kreach.text.csv_cell", function()
  it("neutralises cells a spreadsheet would run as formulas", function()
    for _, s in ipairs({ "=1+1", "+cmd", "-2+3", "@SUM(A1)", "\t=x", "\r=x" }) do
      assert.equals("'" .. s, text.csv_cell(s))
    end
    assert.equals("relu.lua", text.csv_cell("relu.lua"))
    assert.equals(-1.5, text.csv_cell(-1.5))
  end)

  it("suggests the closest name for a misspelt one, within two edits", function()
    assert.equals(0, text.distance("eval", "eval"))
    assert.equals(1, text.distance("evl", "eval"))
    assert.equals(2, text.distance("lnit", "lint"))
    assert.equals(4, text.distance("", "abcd"))
    assert.equals("eval", text.suggest("evl", { "bench", "eval", "lint" }))
    assert.equals("lint", text.suggest("lnt", { "list", "lint" }))   -- lint: 1 edit, list: 2
    assert.equals("bench", text.suggest("bnch", { "bench", "bunch" })) -- equals: the first sorted
    assert.is_nil(text.suggest("zzzzzz", { "eval", "lint" }))
  end)
end)

describe("kreach.text.shell_quote", function()
  it("makes any string one word for sh, quotes included", function()
    for _, s in ipairs({ "plain", "two words", "it's", "'", "$HOME `id` \"x\" \\ ;|&", "" }) do
      local p = io.popen("printf '%s' " .. text.shell_quote(s))
      assert.equals(s, p:read("a"))
      p:close()
    end
  end)
end)
