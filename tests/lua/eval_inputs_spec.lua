-- The candidate files kreach eval reads in its own process cannot be turned against it: a
-- manifest's entries must be regular files inside the manifest's directory (after resolving
-- links) of at most MAX_CANDIDATE_BYTES; "../../etc/passwd", an absolute path, a link out,
-- a FIFO, /dev/zero and an oversized file become invalid_candidate with the reason, and are
-- never read (a FIFO would hang the harness, /dev/zero exhaust it). The same checks hold for
-- a candidate given directly. Without a GPU: candidate_files, plan and the stored record.
local ev = require "kreach.run.evaluate"
local lfs = require "lfs"
local support = require "support"

local function by_file(files)
  local r = {}
  for _, f in ipairs(files) do r[f.path:match("([^/]+)$")] = f end
  return r
end

describe("candidate files that cannot be candidates", function()
  local d, outside
  before_each(function()
    d = support.tmpdir()
    outside = support.tmpdir()
  end)
  after_each(function()
    os.execute("rm -rf '" .. d .. "' '" .. outside .. "'")
  end)

  local function manifest(entries)
    local parts = {}
    for _, e in ipairs(entries) do parts[#parts + 1] = ('{"file": %q, "problem": 19}'):format(e) end
    support.spit(d .. "/manifest.json", "[" .. table.concat(parts, ", ") .. "]")
  end

  it("lists each bad manifest entry as invalid with its reason, and the good ones as they are", function()
    support.spit(d .. "/good.lua", "return {}")
    assert(lfs.link("good.lua", d .. "/alias.lua", true)) -- a link inside stays inside
    support.spit(outside .. "/secret.lua", "return {}")
    assert(lfs.link(outside .. "/secret.lua", d .. "/out.lua", true))
    assert(lfs.link("/dev/zero", d .. "/zero.lua", true))
    assert(os.execute("mkfifo '" .. d .. "/fifo.lua'"))
    support.spit(d .. "/big.lua", ("x"):rep(ev.MAX_CANDIDATE_BYTES + 1))
    lfs.mkdir(d .. "/dir.lua")
    manifest{ "good.lua", "alias.lua", "../../../../../../etc/passwd", "/etc/passwd", "out.lua", "zero.lua",
              "/dev/zero", "fifo.lua", "big.lua", "dir.lua", "missing.lua" }
    local files, errors = ev.candidate_files({ d })
    assert.same({}, errors)
    assert.equals(11, #files)
    local f = by_file(files)
    assert.is_nil(f["good.lua"].invalid)
    assert.is_nil(f["alias.lua"].invalid)
    assert.matches("resolves to /etc/passwd, outside the manifest's directory", files[3].invalid)
    -- an absolute name is taken inside the manifest's directory, where there is none
    assert.equals("No such file or directory", files[4].invalid)
    assert.equals("No such file or directory", files[7].invalid)
    assert.matches("resolves to .*/secret%.lua, outside", f["out.lua"].invalid)
    assert.matches("resolves to /dev/zero, outside", f["zero.lua"].invalid)
    assert.equals("a fifo, not a regular file", f["fifo.lua"].invalid)
    assert.equals(("%d bytes, more than the limit of %d"):format(ev.MAX_CANDIDATE_BYTES + 1, ev.MAX_CANDIDATE_BYTES),
      f["big.lua"].invalid)
    assert.equals("a directory, not a regular file", f["dir.lua"].invalid)
    assert.equals("No such file or directory", f["missing.lua"].invalid)
  end)

  it("applies the same checks to files given directly, and reads none of the bad ones", function()
    assert(os.execute("mkfifo '" .. d .. "/019_fifo.lua'"))
    support.spit(d .. "/019_big.lua", ("x"):rep(ev.MAX_CANDIDATE_BYTES + 1))
    local files = ev.candidate_files({ d .. "/019_fifo.lua", d .. "/019_big.lua", "/dev/zero" })
    assert.equals("a fifo, not a regular file", files[1].invalid)
    assert.matches("more than the limit", files[2].invalid)
    assert.equals("a char device, not a regular file", files[3].invalid)
    -- the parent's reader refuses them too, at once (a FIFO with no writer would block)
    assert.is_nil(ev.file_text(d .. "/019_fifo.lua"))
    assert.is_nil(ev.file_text("/dev/zero"))
    local none, why = ev.file_text(d .. "/019_big.lua")
    assert.is_nil(none)
    assert.matches("more than the limit", why)
  end)

  it("plans them as items to record as invalid_candidate, stored and exported like any verdict", function()
    support.spit(d .. "/good.lua", "return {}")
    manifest{ "good.lua", "../../../../../../etc/passwd" }
    local items, skipped = ev.plan("kernelbench-l1", { d })
    assert.same({}, skipped)
    assert.equals(2, #items)
    assert.is_nil(items[1].invalid)
    assert.equals(19, items[2].problem_id)
    assert.matches("outside the manifest's directory", items[2].invalid)
    -- what run records for it (run needs a GPU; the record does not)
    local item = items[2]
    ev.identify(item)
    item.eval_key = "k"
    local rec = ev.evaluate(item, { dtype = "f32" }, {}) -- no worker: the file is never read
    assert.equals("invalid_candidate", rec.verdict)
    assert.matches("etc/passwd: it resolves to /etc/passwd, outside", rec.reason)
    assert.matches("^%-%- kreach did not read this file: it resolves to /etc/passwd", rec.candidate.source)
    local store = require "kreach.results.store"
    local db = assert(store.open(d .. "/r.db"))
    rec.run_id = db:begin_run{ config_hash = "h" }
    db:record_evaluation(rec)
    local lines = {}
    require("kreach.results.report").export(db, "csv", {}, function(...) lines[#lines + 1] = table.concat({ ... }) end)
    db:close()
    assert.matches("^1,1,kernelbench%-l1,19,19_ReLU,passwd,%x+,f32,invalid_candidate,\"?.*etc/passwd: it resolves", lines[2])
  end)
end)
