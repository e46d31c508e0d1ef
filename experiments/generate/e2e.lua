-- The whole generation pipeline against a local model server (issue 19): tests/http_server.py on
-- 127.0.0.1 plays an OpenAI-compatible model that answers each problem of a suite with known
-- candidates, correct and broken; `kreach generate` asks it, extracts, stores and writes the
-- candidates; with --eval they are judged as they arrive (a GPU), and the summary gives the
-- correct rate and pass@k.
--
--   kreach experiments/generate/e2e.lua [--suite kernelbench-l1-repr] [--out DIR] [--db DB]
--                                       [--eval] [--python python3]
--
-- The replies, per problem: where the repository has a correct example candidate
-- (examples/NNN_*.lua), sample 1 is it among prose and sample 2 the same after a decoy block;
-- elsewhere sample 1 writes zeros into the output (incorrect) and sample 2 does not compile.
-- One problem's samples have no code at all. So the expected verdicts are known before the run.
local here = arg[0]:match("^(.*)/[^/]*$") or "."
local root = here .. "/../.."
local cjson = require "cjson"
local lfs = require "lfs"
local kreach = require "kreach"
local proc = require "kreach.core.proc"
local problem = require "kreach.problem"

local suite, out, db, eval, python = "kernelbench-l1-repr", nil, nil, false, os.getenv("KREACH_PYTHON") or "python3"
local i = 1
while arg[i] do
  local a = arg[i]
  if a == "--suite" then suite = arg[i + 1]; i = i + 1
  elseif a == "--out" then out = arg[i + 1]; i = i + 1
  elseif a == "--db" then db = arg[i + 1]; i = i + 1
  elseif a == "--eval" then eval = true
  elseif a == "--python" then python = arg[i + 1]; i = i + 1
  else io.stderr:write("e2e.lua: unknown option ", a, "\n"); os.exit(2) end
  i = i + 1
end
local function tmpdir() return assert(require("kreach.atomic").tmpdir()) end
local work = tmpdir()
out = out or (work .. "/out")
db = db or (work .. "/e2e.db")

local function slurp(p)
  local f = assert(io.open(p, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local examples = {}
for f in lfs.dir(root .. "/examples") do
  local id = tonumber(f:match("^(%d+)_.*%.lua$") or "")
  if id then examples[id] = slurp(root .. "/examples/" .. f) end
end

-- zeros into the last argument (every problem's last argument is its output here)
local ZEROS = [[
return {
  source = [==[
extern "C" __global__ void zeros(float *y, long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) y[i] = 0.f;
}
]==],
  forward = function(k, ...)
    local a = { ... }
    local y = a[#a]
    k.zeros{ grid = 1024, block = 256 }(y, y:numel())
  end,
}
]]
local NO_COMPILE = ZEROS:gsub("y%[i%] = 0%.f;", "y[i] = undefined_name;")

local function reply(text, n)
  return { body = { id = "e2e-" .. n, model = "e2e-local", choices = { { message = { role = "assistant", content = text },
    finish_reason = "stop" } }, usage = { prompt_tokens = 1000 + n, completion_tokens = 500 + n } } }
end

local s = problem.load_suite(suite)
local routes, expect = {}, {}
for k, f in ipairs(s.files) do
  local p = problem.load(f)
  local steps
  if examples[p.id] then
    steps = { reply("Here is a kernel.\n```lua\n" .. examples[p.id] .. "```\n", 2 * k),
              reply("A draft:\n```lua\nprint('x')\n```\nThe answer:\n```lua\n" .. examples[p.id] .. "```\n", 2 * k + 1) }
    expect[p.name] = "correct, correct"
  elseif k == 3 then
    steps = { reply("I would tile the matrix in shared memory.", 2 * k), reply("Use cuBLAS.", 2 * k + 1) }
    expect[p.name] = "no code, no code"
  else
    steps = { reply("```lua\n" .. ZEROS .. "```", 2 * k), reply("```lua\n" .. NO_COMPILE .. "```", 2 * k + 1) }
    expect[p.name] = "incorrect, compile_error"
  end
  -- the prompt names the problem: "... the problem <name> as ..."
  routes[#routes + 1] = { contains = "the problem " .. p.name .. " as", steps = steps }
end

local script = work .. "/script.json"
local f = assert(io.open(script, "w"))
f:write(cjson.encode({ ["/v1/chat/completions"] = { by_body = routes, default = { { status = 404, body = "no such problem" } } } }))
f:close()
local w = assert(proc.spawn({ python, root .. "/tests/http_server.py", script, work .. "/log.jsonl" }))
local port = (w:read_line(20) or ""):match("^port (%d+)$")
if not port then io.stderr:write("e2e.lua: the model server did not start: ", w:stderr(), "\n"); os.exit(1) end

local cfg = work .. "/e2e-local.lua"
f = assert(io.open(cfg, "w"))
f:write('return { provider = "openai", model = "e2e-local", api_key_env = "none", price_in = 0, price_out = 0 }\n')
f:close()
io.write(("e2e: %s, %d problems, 2 samples each, model server on 127.0.0.1:%s; expected:\n"):format(suite, #s.files, port))
for _, fpath in ipairs(s.files) do
  local p = problem.load(fpath)
  io.write(("  %-55s %s\n"):format(p.name, expect[p.name]))
end
io.flush()
local cmd = ("%q generate %s --model %q --base-url http://127.0.0.1:%s/v1 --samples 2 --out %q --db %q%s"):format(
  kreach.executable(), suite, cfg, port, out, db, eval and " --eval" or "")
local ok = os.execute(cmd)
w:kill(); w:wait(); w:free()
-- the server's script and log and the configuration go; the work directory too, unless the
-- candidates or the results are in it
for _, p in ipairs({ script, work .. "/log.jsonl", cfg }) do os.remove(p) end
require("lfs").rmdir(work)
io.write(("e2e: candidates in %s, results in %s\n"):format(out, db))
os.exit(ok and 0 or 1)
