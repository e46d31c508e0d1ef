-- kreach.run.plan: what a run evaluates, planned from its arguments, and each item's identity.
--
-- The run stage (scripts/kreach/run/): the parent's side of an evaluation. It plans the items
-- (this module), judges each (problem, candidate) pair in worker processes (kreach.run.pair,
-- through kreach.run.worker and kreach.run.protocol, sealed by kreach.run.seal), and runs the
-- whole as a campaign committed to the results store as it goes (kreach.run.campaign,
-- kreach.run.evaluate). It may require the base modules, kreach.problem, the candidate stage
-- (kreach.candidate), the results stage (kreach.results.*) and, of the judge stage, only
-- kreach.judge.policy (the options' defaults, as data): never judge code, which runs in the
-- worker, and nothing of cmd/. The parent never runs candidate code: it reads candidate files
-- only to hash, lint and store them.
--
-- Items come from the arguments: candidate files as given, directories expanded (a
-- manifest.json's entries, or the files named <problem id>_<anything>.lua or .py), each matched
-- to its problem of the target (a suite, or one problem). identify reads each file once and
-- hashes it: the item's key (kreach.run.campaign). --shard i/N keeps one shard of the items, cut
-- by each item's own hash (below: select_shard, for eval, bench, generate and oracle).
local campaign = require "kreach.run.campaign"
local candidate = require "kreach.candidate"
local fs = require "kreach.core.fs"
local json = require "kreach.json"
local kinds = require "kreach.kinds"
local lfs = require "lfs"
local problem = require "kreach.problem"
local text = require "kreach.text"

local M = {}

-- The most a candidate file (and a manifest) may hold; a larger one is invalid_candidate.
M.MAX_CANDIDATE_BYTES = candidate.MAX_FILE_BYTES

-- The most a problem file may hold when it is read to be hashed.
local MAX_PROBLEM_BYTES = 64 * 1024 * 1024

-- file_text(path, max_bytes) -> the file's bytes, or nil and why not: the parent reads
-- candidate files (to hash and store them), so only a regular file of at most max_bytes
-- (default MAX_CANDIDATE_BYTES) is read; a FIFO, /dev/zero or a directory is refused at once
-- instead of hanging or exhausting the harness (kreach.core.fs.read_regular).
function M.file_text(path, max_bytes)
  return fs.read_regular(path, max_bytes or M.MAX_CANDIDATE_BYTES)
end

-- Why a candidate file cannot be used (nil when it can): it must be a regular file (links are
-- followed) of at most MAX_CANDIDATE_BYTES, and, for a manifest's entry, resolve inside
-- `inside` (the manifest's directory, resolved).
function M.check_candidate_file(path, inside)
  local resolved, exists = fs.resolve(path)
  if not resolved then -- "<path>: <why>"
    local why = tostring(exists)
    return why:sub(1, #path + 2) == path .. ": " and why:sub(#path + 3) or why
  end
  if not exists then
    return lfs.symlinkattributes(path) and "a link to nothing" or "No such file or directory"
  end
  if inside and resolved:sub(1, #inside + 1) ~= inside .. "/" then
    return ("it resolves to %s, outside the manifest's directory %s"):format(resolved, inside)
  end
  local st, err = fs.stat(resolved)
  if not st then return err end
  if st.mode ~= "file" then return ("a %s, not a regular file"):format(st.mode) end
  if st.size > M.MAX_CANDIDATE_BYTES then
    return ("%d bytes, more than the limit of %d"):format(st.size, M.MAX_CANDIDATE_BYTES)
  end
  return nil
end

-- ---- what to evaluate ----

-- manifest_entries(m) -> the number of entries of a decoded manifest (a JSON null among them
-- is a hole, which the caller names), or nil and why it is not a list.
local function manifest_entries(m)
  if type(m) ~= "table" then return nil, ("a JSON %s, not a list"):format(type(m) == "nil" and "null" or type(m)) end
  local n = 0
  for k in pairs(m) do
    if math.type(k) ~= "integer" or k < 1 then return nil, "a JSON object, not a list [{\"file\": ...}, ...]" end
    if k > n then n = k end
  end
  if n == 0 then return nil, "an empty list" end
  return n
end

-- manifest_problem(v) -> the problem id an entry's "problem" names (nil when it names none),
-- or nil and what is wrong with it: a whole number (19, or the string "19"), nothing else.
local function manifest_problem(v)
  if v == nil then return nil end
  local id
  if math.type(v) == "integer" then id = v
  elseif type(v) == "string" and v:match("^%d+$") then id = math.tointeger(tonumber(v))
  elseif math.type(v) == "float" and v == math.floor(v) and v >= 0 and v < 2 ^ 53 then id = math.tointeger(v) end
  if id and id >= 0 then return id end
  local shown = type(v) == "string" and ("%q"):format(text.clean(v, 64)) or tostring(v)
  if type(v) == "table" then shown = "a JSON " .. ((next(v) == nil or v[1] ~= nil) and "list" or "object") end
  return nil, ("must be a problem id, a whole number such as 19, not %s"):format(shown)
end

-- The candidate files of the arguments: files as given, directories expanded. A directory with
-- a manifest.json lists its candidates there: [{ "file": "x.lua", "problem": 19,
-- "origin": { "model": "...", "sample": 0 } }, ...]; otherwise its files named
-- <problem id>_<anything>.lua (or .py) are taken, in name order; each found in a directory
-- has from_dir set (plan then keeps, for one problem, only those that name it). A file that
-- cannot be a candidate (check_candidate_file: not a regular file, too large, or a manifest's
-- entry that resolves outside the manifest's directory, such as "../../etc/passwd" or a link
-- out) comes back with `invalid` set to the reason: it is recorded as invalid_candidate,
-- never read.
function M.candidate_files(args)
  local out, errors = {}, {}
  for _, a in ipairs(args) do
    local mode = lfs.attributes(a, "mode")
    if mode == "file" or (mode and mode ~= "directory") then
      out[#out + 1] = { path = a, invalid = M.check_candidate_file(a) }
    elseif mode == "directory" then
      local dir = a:gsub("/+$", "")
      local mpath = dir .. "/manifest.json"
      if lfs.attributes(mpath) then
        local mtext, merr = M.file_text(mpath)
        local ok, m = false, merr
        if mtext then ok, m = pcall(json.decode, mtext) end
        local n, why = manifest_entries(m)
        if not ok or not n then
          errors[#errors + 1] = ("%s: not a JSON list of candidates (%s)"):format(mpath,
            ok and why or text.clean(tostring(m), 1024))
        else
          local inside = fs.resolve(dir)
          for i = 1, n do
            local e = m[i]
            local problem_id, perr
            if type(e) == "table" then problem_id, perr = manifest_problem(e.problem) end
            if e == nil then
              errors[#errors + 1] = ("%s: entry %d is null, not an object {\"file\": ...}"):format(mpath, i)
            elseif type(e) ~= "table" or type(e.file) ~= "string" or e.file == "" then
              errors[#errors + 1] = ("%s: entry %d has no \"file\""):format(mpath, i)
            elseif perr then
              errors[#errors + 1] = ("%s: entry %d: \"problem\" %s"):format(mpath, i, perr)
            else
              local path = dir .. "/" .. e.file
              local invalid = M.check_candidate_file(path, inside)
              -- the name comes from the manifest: shown and stored only cleaned and bounded
              if invalid then path = text.clean(path, 1024) end
              out[#out + 1] = { path = path, problem = problem_id, origin = type(e.origin) == "table" and e.origin or nil,
                                invalid = invalid and text.clean(invalid, 2048) or nil, from_dir = true }
            end
          end
        end
      else
        local names = {}
        for f in lfs.dir(dir) do
          if f:match("^%d+_") and kinds.kind_of_file(f) then names[#names + 1] = f end
        end
        table.sort(names)
        for _, f in ipairs(names) do out[#out + 1] = { path = dir .. "/" .. f, from_dir = true } end
        if #names == 0 then errors[#errors + 1] = ("%s: no candidate files (<id>_<name>.lua or .py) and no manifest.json"):format(dir) end
      end
    else
      errors[#errors + 1] = ("%s: no such file or directory"):format(a)
    end
  end
  return out, errors
end

-- target_files(name) -> the problem files of a target: a suite's (the suite's name and its files by
-- problem id are returned too), or the one problem a path, id or name resolves to.
local function target_files(name)
  for _, s in ipairs(problem.suites()) do
    if s == name then
      local suite = problem.load_suite(name)
      local by_id = {}
      for i, id in ipairs(suite.ids) do by_id[id] = suite.files[i] end
      return suite.files, name, by_id
    end
  end
  return { problem.resolve(name) }
end

-- plan(target, candidate_args) -> items, skipped. target is a suite name or a problem (path,
-- id or name). For one problem, a candidate found in a directory is taken only when it names
-- that problem (its manifest entry's "problem", else its file name's leading id) or names
-- none; the others are skipped (a file given by name is always taken). Each item:
-- { problem_path, problem_id, problem_name, suite, candidate_path, origin, invalid (why the
-- file cannot be a candidate, or nil) }; each skipped: { candidate_path, why }.
function M.plan(target_name, cand_args)
  local files, errors = M.candidate_files(cand_args)
  local skipped = {}
  for _, e in ipairs(errors) do skipped[#skipped + 1] = { candidate_path = e:match("^([^:]+)"), why = e } end
  local files_of, suite_name, by_id = target_files(target_name)
  local single = not suite_name and files_of[1] or nil
  local single_p = single and problem.load(single)
  local items = {}
  for _, c in ipairs(files) do
    local path
    if single then
      local id = c.from_dir and (c.problem or math.tointeger(tonumber((c.path:match("([^/]+)$") or ""):match("^(%d+)_"))))
      if id and id ~= single_p.id then
        skipped[#skipped + 1] = { candidate_path = c.path, why = ("%s: names problem %d, not %s (%d)"):format(
          text.clean(c.path, 1024), id, single_p.name, single_p.id) }
      else
        path = single
      end
    else
      local id = c.problem or math.tointeger(tonumber((c.path:match("([^/]+)$") or ""):match("^(%d+)_")))
      if not id then
        skipped[#skipped + 1] = { candidate_path = c.path, why = ("%s: the file name does not start with a problem id (<id>_<name>.lua) and no manifest names its problem"):format(text.clean(c.path, 1024)) }
      elseif not by_id[id] then
        skipped[#skipped + 1] = { candidate_path = c.path, why = ("problem %d is not in suite %s"):format(id, suite_name) }
      else
        path = by_id[id]
      end
    end
    if path then
      local p = problem.load(path)
      items[#items + 1] = { problem_path = path, problem_id = p.id, problem_name = p.name, suite = p.suite,
                            candidate_path = c.path, origin = c.origin, invalid = c.invalid,
                            label = c.path:match("([^/]+)$") or c.path }
    end
  end
  return items, skipped
end

-- ---- the items' identity ----

-- identify(item) -> the parts of an item's key: the hashes of its problem file and its
-- candidate file, which it reads (item.candidate_source). A file that is not a usable
-- candidate is never read: it is recorded as invalid_candidate with the reason, under a key
-- made of its path and that reason.
function M.identify(item)
  local ptext = assert(M.file_text(item.problem_path, MAX_PROBLEM_BYTES))
  if not item.invalid then
    local ctext, cerr = M.file_text(item.candidate_path)
    if ctext then item.candidate_source = ctext else item.invalid = tostring(cerr) end
  end
  item.problem_hash = campaign.hash(ptext)
  item.candidate_hash = item.candidate_source and campaign.hash(item.candidate_source)
    or campaign.key({ "invalid candidate file", item.candidate_path, item.invalid })
  if item.invalid then
    item.candidate_source = ("-- kreach did not read this file: %s\n"):format(item.invalid)
  end
  return { item.problem_hash, item.candidate_hash }
end

-- baselines(target) -> the items of kreach bench: each problem of the target (a suite, or one
-- problem) alone, without a candidate: { problem_path, problem_id, problem_name, suite, label }.
function M.baselines(target_name)
  local items = {}
  for i, f in ipairs((target_files(target_name))) do
    local p = problem.load(f)
    items[i] = { problem_path = f, problem_id = p.id, problem_name = p.name, suite = p.suite, label = p.name }
  end
  return items
end

-- identify_baseline(item) -> the parts of a baseline item's key: the hash of its problem file
-- (item.problem_hash) and "baseline".
function M.identify_baseline(item)
  item.problem_hash = campaign.hash(assert(M.file_text(item.problem_path, MAX_PROBLEM_BYTES)))
  return { item.problem_hash, "baseline" }
end

-- ---- shards (--shard i/N: kreach slurm's job arrays, docs/cluster.md) ----
--
-- A campaign's work is cut into N shards by each unit's own key: the unit (a (problem,
-- candidate) pair of kreach eval, a problem of kreach bench or oracle, a (problem, sample) of
-- kreach generate) is in shard 1 + (H mod N), H the first 12 hex digits of the XXH3-128 hash
-- (kreach.core.util.hash) of its key. So the N shards cover every unit exactly once, and a
-- unit's shard depends on nothing but itself: candidates added between two submissions fall
-- into shards of their own and move no other pair, so a shard's store still holds what it
-- evaluated before and is asked only for the new pairs. The price is that the shards' sizes are
-- even only on average (a unit is in each with probability 1/N).

-- parse_shard(s) -> { index = i, count = N } from "i/N" (1 <= i <= N; shards count from 1), or
-- nil and why not: argparse's converter for --shard.
function M.parse_shard(s)
  local i, n = tostring(s):match("^(%d+)/(%d+)$")
  i, n = math.tointeger(tonumber(i)), math.tointeger(tonumber(n))
  if not i or not n or n < 1 or i < 1 or i > n then
    return nil, ("--shard takes i/N with 1 <= i <= N (shard i of N, counted from 1), not '%s'"):format(text.clean(tostring(s), 64))
  end
  return { index = i, count = n }
end

-- shard_text(shard) -> "i/N"
function M.shard_text(shard) return ("%d/%d"):format(shard.index, shard.count) end

-- shard_of(key, count) -> the shard (1 to count) the unit with this key is in.
function M.shard_of(key, count)
  return math.tointeger(tonumber(campaign.hash(key):sub(1, 12), 16) % count) + 1
end

-- select_shard(units, shard, key_of) -> the units (in their order) whose key_of(unit) is in
-- shard ({ index, count }); all of them when shard is nil.
function M.select_shard(units, shard, key_of)
  if not shard then return units end
  local out = {}
  for _, u in ipairs(units) do
    if M.shard_of(key_of(u), shard.count) == shard.index then out[#out + 1] = u end
  end
  return out
end

-- pair_key(item) -> the shard key of a kreach eval item: its problem's name and its candidate
-- file's contents (their hash: the same file under two names is one pair, as its evaluation key
-- makes it); a file that cannot be read is keyed by its path. The candidate is read here, bounded
-- as identify reads it, and not kept.
function M.pair_key(item)
  local ctext = not item.invalid and M.file_text(item.candidate_path)
  return table.concat({ "pair", item.problem_name, ctext and campaign.hash(ctext) or ("path " .. item.candidate_path) }, "\0")
end

-- problem_key(name) -> the shard key of a problem alone (kreach bench, kreach oracle).
function M.problem_key(name) return "problem\0" .. name end

-- sample_key(name, sample) -> the shard key of a problem's sample (kreach generate).
function M.sample_key(name, sample) return ("sample\0%s\0%d"):format(name, sample) end

return M
