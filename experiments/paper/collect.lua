-- experiments/paper/collect.lua: `kreach experiments/paper/run.lua --collect`: the GPU parts
-- of the study, run into the data folder, each file named <machine>-<date>-<what> as
-- experiments/paper/data/README.md describes. Then the tables are made from that folder as
-- without --collect. What runs (--steps picks some; --dry-run prints the commands instead):
--   examples    kreach eval of the example candidates on kernelbench-l1-repr, exported as JSON lines
--   dlrm        kreach eval of DLRM-Bench's examples, exported; its projection onto the DLRM
--               training steps (experiments/dlrm/project.lua --json) and the measurement
--               (experiments/dlrm/measure.lua --json)
--   trivial     kreach scan-trivial kernelbench-l1 --json at bf16 and f32
--   addressable experiments/addressable_fraction.lua --core --json
--   scale       the model-scale sweep (experiments/scale/run.lua)
--   model       kreach generate --eval for --model NAME (a model API: its key in the environment)
-- A step that fails is named, the others still run, and the status is 1. Without a GPU nothing
-- runs (status 77) unless --dry-run. Each new .jsonl gets a line in sources.tsv.
local import = require "kreach.results.import"
local text = require "kreach.text"

local M = {}

M.STEPS = { "examples", "dlrm", "trivial", "addressable", "scale", "model" }

-- q(s) -> s as one shell word; the scratch folder's placeholder $W (--dry-run) left for the shell
local function q(s)
  if s:sub(1, 3) == "$W/" then return "$W/" .. text.shell_word(s:sub(4)) end
  return text.shell_word(s)
end

-- machine_tag(name) -> "h100", "h200", "a100"... from a device name ("NVIDIA H100 80GB HBM3"),
-- else the name's words joined by dashes, lowercased
function M.machine_tag(name)
  local tag = name:match("[Hh](%d%d%d)") and ("h" .. name:match("[Hh](%d%d%d)"))
    or name:match("[Aa](%d%d%d?)") and ("a" .. name:match("[Aa](%d%d%d?)"))
  if tag then return tag end
  return (name:lower():gsub("^nvidia%s+", ""):gsub("[^%w]+", "-"):gsub("%-+$", ""))
end

-- plan(o) -> the list of { step, file (the data file it makes, or nil), cmds = { {argv, stdout =
-- path}... }, source = (a sources.tsv line's description) }. o: kreach (the binary), data, work
-- (a scratch folder), tag, date, steps (set), model (name or nil), device (its name)
function M.plan(o)
  local K, D, W = o.kreach, o.data, o.work
  local function f(what) return ("%s/%s-%s-%s"):format(D, o.tag, o.date, what) end
  local out = {}
  local function add(step, t) if o.steps[step] then t.step = step; out[#out + 1] = t end end
  add("examples", { file = f("examples.jsonl"), source = ("the example candidates (examples/, no model), %s, %s"):format(o.device, o.date),
    cmds = { { K, "eval", "kernelbench-l1-repr", "examples", "--db", W .. "/paper.db" },
             { K, "results", "export", "--db", W .. "/paper.db", "--format", "jsonl", "-o", f("examples.jsonl") } } })
  add("dlrm", { file = f("dlrm-bench.jsonl"),
    source = ("the DLRM-Bench example candidates (examples/dlrm-bench, no model), %s, %s"):format(o.device, o.date),
    cmds = { { K, "eval", "dlrm-bench", "examples/dlrm-bench", "--db", W .. "/dl.db" },
             { K, "results", "export", "--db", W .. "/dl.db", "--format", "jsonl", "-o", f("dlrm-bench.jsonl") },
             { K, "experiments/dlrm/project.lua", "--db", W .. "/prof.db", "--results", W .. "/dl.db", "--json", f("dlrm-project.json"),
               stdout = f("dlrm-project.txt") },
             { K, "experiments/dlrm/measure.lua", "--results", W .. "/dl.db", "--json", f("dlrm-measure.json"),
               stdout = f("dlrm-measure.txt") } } })
  add("trivial", { cmds = { { K, "scan-trivial", "kernelbench-l1", "--dtype", "bf16", "--json", stdout = f("trivial-bf16.json") },
                            { K, "scan-trivial", "kernelbench-l1", "--dtype", "f32", "--json", stdout = f("trivial-f32.json") } } })
  add("addressable", { cmds = { { K, "experiments/addressable_fraction.lua", "--core", "--db", W .. "/af.db", "--json", f("addressable.json"),
                                  stdout = f("addressable.txt") } } })
  add("scale", { cmds = { { K, "experiments/scale/run.lua", "--db", W .. "/scale.db", "--out", f("scale.json") } } })
  if o.model then
    local m = o.model:gsub("[^%w%.%-]+", "-")
    add("model", { file = f(m .. ".jsonl"), source = ("the candidates of %s (kreach generate --eval), %s, %s"):format(o.model, o.device, o.date),
      cmds = { { K, "generate", "kernelbench-l1-repr", "--model", o.model, "--samples", "4", "--eval", "--out", W .. "/gen-" .. m,
                 "--db", W .. "/gen-" .. m .. ".db" },
               { K, "results", "export", "--db", W .. "/gen-" .. m .. ".db", "--format", "jsonl", "-o", f(m .. ".jsonl") } } })
  end
  return out
end

function M.command_text(c)
  local t = {}
  for i, a in ipairs(c) do t[i] = q(a) end
  return table.concat(t, " ") .. (c.stdout and (" > " .. q(c.stdout)) or "")
end

-- run(o) -> status (0, or 1 when a step failed): every step's commands in order; a step stops at
-- its first failing command. o as plan's, plus log(line), sources (the sources.tsv path)
function M.run(o)
  local failed = {}
  for _, s in ipairs(M.plan(o)) do
    o.log(("collect: %s"):format(s.step))
    local ok = true
    for _, c in ipairs(s.cmds) do
      local line = M.command_text(c)
      o.log("  " .. line)
      local r = os.execute(line)
      if r ~= true then ok = false; break end
    end
    if not ok then failed[#failed + 1] = s.step
    elseif s.file and s.source and not import.descriptions(o.data)[s.file:match("[^/]*$")] then
      local f = assert(io.open(o.sources, "a"))
      f:write(s.file:match("[^/]*$"), "\t", s.source, "\n")
      f:close()
    end
  end
  if #failed > 0 then
    o.log(("collect: %d step%s failed: %s (the others' files are in %s)"):format(#failed, #failed == 1 and "" or "s",
      table.concat(failed, ", "), o.data))
    return 1
  end
  return 0
end

return M
