-- kreach report (docs/report.md): a report made from stores built here, opened in headless
-- Chromium with the network off (tests/report/chromium_check.py, through the DevTools
-- protocol): no console error, no request beyond the file, every figure drawn, the numbers drawn
-- (the data each SVG carries, the markers and bars counted) as the stores hold them, the table
-- sorted by a click, and a screenshot that is not blank. The stores: tests/lua/summary_store.lua's
-- fixture (its figures worked out by hand in its header) and one more built below (model m-c:
-- speed-of-light fractions, one of them faster than light, and a profile), with a --data folder
-- of a DLRM measurement and addressable_fraction.lua's rows.
local kreach = require "kreach"
local json = require "kreach.json"
local store = require "kreach.results.store"
local support = require "support"
local summary_store = require "summary_store"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "tests/lua"
local driver = here .. "/../report/chromium_check.py"
local bin = kreach.executable()
local q = require("kreach.text").shell_quote

local function kreach_cmd(args) return support.sh(q(bin) .. " " .. args) end

-- m-c: three candidates of 1_Matmul with speed-of-light fractions (c2 at 130%: faster than the
-- bound), and a profile of 1 ms: a cuBLAS GEMM 400 us, a PyTorch elementwise kernel 300 us, an
-- unknown kernel 100 us (GPU time 800 us: library 50%, addressable 37.5%, unclassified 12.5%;
-- wall 1 ms: 40%, 30%, 10%)
local P = { suite = "kernelbench-level1", problem_id = 1, name = "1_Matmul", file_hash = "h1", path = "/nowhere/1_Matmul.lua" }
local C = {
  { "c1", "correct", 2.0, 0.5, { 1.25, 1.1, 1.4 } },
  { "c2", "correct", 0.5, 1.3, { 5.0, 4.0, 6.0 } },
  { "c3", "incorrect", 4.0, 0.2 },
}
local function build_mc(path)
  local db = assert(store.open(path))
  local run = db:begin_run{ command = { "kreach", "eval" }, config_hash = "c2", device = { name = "Test GPU 80GB" } }
  for _, x in ipairs(C) do
    local id, v, ms, sol, s = table.unpack(x)
    local e = { run_id = run, problem = P, eval_key = "key-" .. id, dtype = "f32", verdict = v, candidate_ms = ms,
                sol_fraction = sol, finished_at = "2026-12-01T10:00:00Z",
                candidate = { hash = "hash-" .. id, name = id .. ".lua", path = "cands/" .. id .. ".lua",
                              source = "-- the source of " .. id .. " <b>&", origin = { model = "m-c" } } }
    -- c3 is a hostile candidate's: its name, reason and source are markup that would load from the
    -- network (127.0.0.1:9) or run script if the page did not escape them; the Chromium check
    -- below sees every request and console message
    if id == "c3" then
      e.candidate.name = [[c3<img src="http://127.0.0.1:9/name" onerror="console.error('name')">.lua]]
      e.reason = [[</pre></details></table><script>fetch("http://127.0.0.1:9/reason")</script>]]
      e.candidate.source = [[</pre><script>console.error("source")</script><img src=http://127.0.0.1:9/source>]]
    end
    if s then e.baseline_ms, e.speedup, e.speedup_lo, e.speedup_hi = ms * s[1], s[1], s[2], s[3] end
    db:record_evaluation(e)
  end
  db:finish_run(run, "finished")
  db:save_profile{ source = "kreach", workload = "w-db", device = { name = "Test GPU 80GB" }, window = { 0, 1000000 },
                   kernels = { { name = "ampere_sgemm_128x64_nn", start_ns = 0, end_ns = 400000 },
                               { name = "vectorized_elementwise_kernel", start_ns = 400000, end_ns = 700000 },
                               { name = "my_own_mystery_kernel", start_ns = 800000, end_ns = 900000 } } }
  db:close()
end

local function close(want, got, what) summary_store.close(want, got, what) end
local function near(want, got, what)
  assert(type(got) == "number", what .. " is not a number")
  assert(math.abs(want - got) < 1e-9, ("%s: %.12g ~= %.12g"):format(what, want, got))
end

local function group(list, name)
  for _, g in ipairs(list) do if g.name == name then return g end end
  error("no group " .. name)
end

describe("kreach report", function()
  local dir, s_db, c_db, data
  setup(function()
    dir = support.tmpdir()
    s_db, c_db, data = dir .. "/s.db", dir .. "/c.db", dir .. "/data"
    summary_store.build(s_db)
    build_mc(c_db)
    assert(require("lfs").mkdir(data))
    support.spit(data .. "/dlrm-measure.json", json.encode{ device = "Test GPU 80GB", results = {
      { config = "kaggle", subs = {
        { problem = 1, candidate = "01_embedding.lua", share = 0.034, op_speedup = 16.7, projected = 1.033,
          measured = 1.0332, measured_lo = 1.0319, measured_hi = 1.037 },
        { problem = 5, skip = "no sizes give the step's shapes" } } } } })
    support.spit(data .. "/addressable-fraction.json", json.encode{ device = "Test GPU 80GB", rows = {
      { name = "w-file", vendor_gpu = 0.6, addr_gpu = 0.3, unclassified_gpu = 0.05, addr_wall = 0.2, kernels = 10 },
      { name = "w-broken", error = "the profile failed: exit 1" } } })
  end)

  it("leaves a figure without its data out, with a sentence, and is no error", function()
    local out, rc = kreach_cmd(("report --db %s -o %s"):format(q(s_db), q(dir .. "/plain.html")))
    assert.equal(0, rc, out)
    local page = support.slurp(dir .. "/plain.html")
    for _, name in ipairs{ "verdicts", "speedup_baseline", "speedup_pytorch", "heatmap" } do
      assert.truthy(page:find(('data-figure="%s" data-state="drawn"'):format(name), 1, true), name .. " is not drawn")
    end
    for _, name in ipairs{ "addressable", "dlrm", "roofline" } do
      assert.truthy(page:find(('data-figure="%s" data-state="missing"'):format(name), 1, true), name .. " is not left out")
    end
    assert.truthy(page:find("Not drawn: No profile in the store", 1, true))
    assert.truthy(page:find("Not drawn: No DLRM measurement", 1, true))
    assert.truthy(page:find("Not drawn: No candidate in the store has a speed-of-light fraction", 1, true))
    -- self-contained: nothing that would load from elsewhere
    assert.falsy(page:find("<link", 1, true))
    assert.falsy(page:find("src=", 1, true))
    assert.falsy(page:find("http://", 1, true) and not page:find("http://www.w3.org/", 1, true))
  end)

  it("writes Markdown with an SVG per figure drawn beside it", function()
    local md = dir .. "/md/r.md"
    assert(require("lfs").mkdir(dir .. "/md"))
    local out, rc = kreach_cmd(("report --db %s --data %s -o %s"):format(q(s_db), q(data), q(md)))
    assert.equal(0, rc, out)
    local text = support.slurp(md)
    for _, name in ipairs{ "verdicts", "speedup_baseline", "speedup_pytorch", "heatmap", "addressable", "dlrm" } do
      assert.truthy(text:find(("](r-%s.svg)"):format(name), 1, true), name)
      local svg = support.slurp(dir .. "/md/r-" .. name .. ".svg")
      assert.truthy(svg:find('<metadata class="kreach-data">', 1, true), name .. ".svg carries no data")
    end
    assert.truthy(text:find("*Not drawn:* No candidate in the store has a speed-of-light fraction", 1, true))
    assert.truthy(text:find("| problem | model | candidate |", 1, true))
    -- the hostile candidate's name and reason are text in the table, not markup a renderer runs
    local cmd = dir .. "/md/c.md"
    out, rc = kreach_cmd(("report --db %s -o %s"):format(q(c_db), q(cmd)))
    assert.equal(0, rc, out)
    local ctext = support.slurp(cmd)
    assert.truthy(ctext:find("c3&lt;img src=", 1, true), ctext)
    assert.truthy(ctext:find("&lt;script&gt;fetch(", 1, true), ctext)
    assert.falsy(ctext:find("<img src=", 1, true) or ctext:find("<script>", 1, true))
  end)

  it("names a file it cannot read", function()
    local out, rc = kreach_cmd(("report --db %s --profiles %s -o %s"):format(q(s_db), q(dir .. "/nothing.json"), q(dir .. "/x.html")))
    assert.equal(3, rc, out)
    assert.truthy(out:find("nothing.json", 1, true), out)
    support.spit(dir .. "/bad.json", "{ not json")
    out, rc = kreach_cmd(("report --db %s --profiles %s -o %s"):format(q(s_db), q(dir .. "/bad.json"), q(dir .. "/x.html")))
    assert.equal(3, rc, out)
    assert.truthy(out:find("bad.json", 1, true), out)
    out, rc = kreach_cmd(("report --db %s -o %s"):format(q(dir .. "/none.db"), q(dir .. "/x.html")))
    assert.equal(3, rc, out)
    assert.truthy(out:find("none.db", 1, true), out)
    assert.falsy(require("lfs").attributes(dir .. "/x.html"))
    -- the database is never written over
    out, rc = kreach_cmd(("report --db %s -o %s"):format(q(s_db), q(s_db)))
    assert.equal(2, rc, out)
  end)

  it("opens in headless Chromium, offline, and draws what the stores hold", function()
    local html = dir .. "/report.html"
    local out, rc = kreach_cmd(("report --db %s --db %s --data %s -o %s"):format(q(s_db), q(c_db), q(data), q(html)))
    assert.equal(0, rc, out)
    -- the path on standard output, last (the progress lines before it are standard error's)
    assert.equal(html .. "\n", out:sub(-(#html + 1)))
    assert.truthy(out:find("kreach report: 8 of 8 done (100%) in", 1, true), out)
    local shot = dir .. "/shot.png"
    local seen_text, crc = support.sh(("python3 %s %s %s --sort-header 'vs baseline' 2>&1"):format(q(driver), q(html), q(shot)))
    assert.equal(0, crc, seen_text)
    local seen = json.decode(seen_text:match("(%b{})%s*$"))
    local keep = os.getenv("KREACH_REPORT_SHOT")
    if keep then support.sh(("cp %s %s"):format(q(shot), q(keep))) end

    -- offline and clean; the hostile candidate's markup is on the page as text, not as markup
    local page = support.slurp(html)
    assert.truthy(page:find("c3&lt;img src=", 1, true), "the hostile name is not on the page")
    assert.truthy(page:find("&lt;script&gt;fetch(", 1, true), "the hostile reason is not on the page")
    assert.falsy(page:find("127.0.0.1:9/", 1, true) and page:find("<img src=\"http://127", 1, true))
    assert.falsy(page:find("<script>fetch(", 1, true) or page:find("<script>console.error", 1, true))
    assert.same({}, seen.console)
    assert.equal(1, #seen.requests, table.concat(seen.requests, " "))
    assert.equal("file://" .. html, seen.requests[1])

    -- every figure drawn
    for _, name in ipairs{ "verdicts", "speedup_baseline", "speedup_pytorch", "heatmap", "addressable", "dlrm", "roofline" } do
      local f = seen.figures[name]
      assert(f, name .. " is missing from the page")
      assert.equal("drawn", f.state, name .. ": " .. tostring(f.missing))
      assert(f.width > 300 and f.height > 100, name .. " is drawn too small")
      assert.truthy(f.caption:find("measured", 1, true) or f.caption:find("profile", 1, true), name)
    end

    -- verdicts: the fixture's (summary_store.lua's header) and m-c's; a bar segment per nonzero count
    local v = seen.figures.verdicts
    assert.same({ "correct", "incorrect", "timeout", "runtime_error", "skipped", "invalid_candidate", "compile_error" }, v.data.verdicts)
    local function counts(name) return group(v.data.groups, name).counts end
    assert.same({ correct = 4, incorrect = 2, timeout = 0, runtime_error = 1, skipped = 0, invalid_candidate = 0, compile_error = 1 }, counts("m-a"))
    assert.same({ correct = 1, incorrect = 0, timeout = 1, runtime_error = 0, skipped = 1, invalid_candidate = 1, compile_error = 0 }, counts("m-b"))
    assert.same({ correct = 2, incorrect = 1, timeout = 0, runtime_error = 0, skipped = 0, invalid_candidate = 0, compile_error = 0 }, counts("m-c"))
    assert.same({ correct = 1, incorrect = 0, timeout = 0, runtime_error = 0, skipped = 0, invalid_candidate = 0, compile_error = 0 }, counts("(unknown)"))
    assert.equal(4, #v.data.groups)
    -- each verdict's plot: one bar a group (zero-height ones too) and its key's sample
    assert.equal(7, #v.plots)
    for _, p in ipairs(v.plots) do assert.equal(#v.data.groups + 1, p.paths, p.title) end
    assert.truthy(v.caption:find("16 evaluations", 1, true), v.caption)

    -- the ECDF against the baseline: every correct candidate's speedup (a1's newest: 2.0)
    local e = seen.figures.speedup_baseline
    assert.same({ 0.5, 1.2, 2.0, 4.0 }, group(e.data.groups, "m-a").speedups)
    assert.same({ 1.5 }, group(e.data.groups, "m-b").speedups)
    assert.same({ 1.0 }, group(e.data.groups, "(unknown)").speedups)
    assert.same({ 1.25, 5.0 }, group(e.data.groups, "m-c").speedups)
    local fp = group(e.data.groups, "m-a").fast_p
    assert.equal(1, fp[1].p); close(2 / 3, fp[1].value, "m-a fast_1")
    assert.equal(1.5, fp[2].p); close(2 / 3, fp[2].value, "m-a fast_1.5")
    assert.equal(4, #e.plots) -- a line a model
    -- against PyTorch: a1 (1.6), a6 (0.9), b1 (1.2); m-c has no PyTorch time
    local ep = seen.figures.speedup_pytorch
    assert.same({ 0.9, 1.6 }, group(ep.data.groups, "m-a").speedups)
    assert.same({ 1.2 }, group(ep.data.groups, "m-b").speedups)
    assert.equal(2, #ep.data.groups)

    -- the heat map: the problems' files are not here, so one category, "(unknown)"
    local h = seen.figures.heatmap
    assert.same({ "(unknown)" }, h.data.categories)
    local cells = {}
    for _, c in ipairs(h.data.cells) do cells[c.model] = c end
    close(4 / 8, cells["m-a"].correct_rate, "m-a correct rate")
    close(1 / 3, cells["m-b"].correct_rate, "m-b correct rate (skipped is not judged)")
    close(2 / 3, cells["m-c"].correct_rate, "m-c correct rate")
    close(1, cells["(unknown)"].correct_rate, "(unknown) correct rate")

    -- the addressable fraction: the stored profile and the file's one row (its failed row noted)
    local a = seen.figures.addressable
    local byname = {}
    for _, p in ipairs(a.data.profiles) do byname[p.name] = p end
    near(0.5, byname["w-db"].gpu.library, "w-db library GPU")
    near(0.375, byname["w-db"].gpu.addressable, "w-db addressable GPU")
    near(0.125, byname["w-db"].gpu.unclassified, "w-db unclassified GPU")
    near(0.4, byname["w-db"].wall.library, "w-db library wall")
    near(0.3, byname["w-db"].wall.addressable, "w-db addressable wall")
    near(0.6, byname["w-file"].gpu.library, "w-file library GPU")
    near(0.2, byname["w-file"].wall.addressable, "w-file addressable wall")
    assert.equal(2, #a.data.profiles)
    assert.truthy(a.caption:find("Test GPU 80GB", 1, true), a.caption)

    -- DLRM: the one substitution measured
    local d = seen.figures.dlrm
    assert.equal(1, #d.data.points)
    near(1.033, d.data.points[1].projected, "projected")
    near(1.0332, d.data.points[1].measured, "measured")
    assert.truthy(d.caption:find("1 not measured or void", 1, true), d.caption)

    -- the roofline: m-c's three candidates, c2 faster than its bound; markers counted (and the key's)
    local r = seen.figures.roofline
    assert.equal(3, #r.data.points)
    local sus = {}
    for _, p in ipairs(r.data.points) do
      if p.suspicious then sus[#sus + 1] = p end
      near(p.sol_fraction * p.candidate_ms, p.bound_ms, "bound")
    end
    assert.equal(1, #sus)
    near(1.3, sus[1].sol_fraction, "c2's fraction")
    local markers = {}
    for _, p in ipairs(r.plots) do if p.uses > 0 then markers[#markers + 1] = p.uses end end
    assert.same({ 2 + 1, 1 + 1 }, markers)
    assert.truthy(r.caption:find("on Test GPU 80GB, 2026-12-01", 1, true), r.caption)

    -- the table: every evaluation of a candidate once, its links resolved, sorted by a click
    assert.equal(16, #seen.table.rows)
    assert.is_true(seen.links.ok, table.concat(seen.links.missing, " "))
    assert.equal(32, seen.table.links)
    local function values(list)
      local t, blanks = {}, 0
      for _, x in ipairs(list) do
        if x[2] == "" then blanks = blanks + 1 else assert.equal(0, blanks, "a blank cell before a number"); t[#t + 1] = tonumber(x[2]) end
      end
      return t
    end
    local up, down = values(seen.sort.ascending), values(seen.sort.descending)
    assert.equal(8, #up) -- 6 of the fixture's (a1 once) and m-c's 2
    for i = 2, #up do assert(up[i - 1] <= up[i], "not ascending") end
    for i = 2, #down do assert(down[i - 1] >= down[i], "not descending") end
    assert.equal("descending", seen.sort.aria)

    -- the screenshot is a page, not a blank
    assert.equal(1200, seen.screenshot.width)
    assert(seen.screenshot.colours > 20, ("the screenshot has %d colours"):format(seen.screenshot.colours))
    print(("report: %d bytes; screenshot %s (%d colours)"):format(#support.slurp(html), keep or shot, seen.screenshot.colours))
  end)
end)
