-- A helper of builds_spec.lua (run as a script, in a child whose KREACH_CACHE_DIR the spec
-- chose): three Lua candidates and one that does not compile, built by a pool of two sealed
-- build workers for sm_90 without a GPU; prints "RESULT <json>": each build's end, the
-- verdict it gives its item (final) and the pool's stats.
local builds = require "kreach.run.builds"
local json = require "kreach.json"
local lfs = require "lfs"
local pair = require "kreach.run.pair"

local root = lfs.currentdir()
local p = io.popen("mktemp -d")
local dir = p:read("l")
p:close()
local f = assert(io.open(root .. "/examples/023_softmax_online.lua"))
local text = f:read("a")
f:close()
local function write(name, body)
  local out = assert(io.open(dir .. "/" .. name, "w"))
  out:write(body)
  out:close()
end
for i = 1, 3 do write(("023_v%d.lua"):format(i), (text:gsub("source = %[%[", "source = [[\n// variant " .. i .. "\n", 1))) end
write("023_bad.lua", (text:gsub("source = %[%[", "source = [[\nthis is not CUDA;\n", 1)))

local pool = builds.new{ jobs = 2 }
local names = { "023_v1.lua", "023_v2.lua", "023_v3.lua", "023_bad.lua" }
for _, n in ipairs(names) do
  local argv, o = pair.build_job({ problem_path = root .. "/problems/kernelbench/level1/023_Softmax.lua",
                                   candidate_path = dir .. "/" .. n }, { dtype = "f32", arch = "sm_90" })
  pool:submit(n, argv, o)
end
local out = {}
for _, n in ipairs(names) do
  local e = pool:wait(n)
  out[n] = { ok = e.ok, result = e.result, verdict = e.verdict, final = builds.verdict_of(e) }
end
out.stats = pool:stats()
pool:close()
os.execute(("rm -rf %q"):format(dir))
io.write("RESULT ", json.encode(out), "\n")
