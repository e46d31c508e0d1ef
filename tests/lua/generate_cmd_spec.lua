-- `kreach generate` against a real server on 127.0.0.1 (tests/http_server.py) that speaks the
-- OpenAI-compatible API and injects faults: a 429 with Retry-After, replies with prose around
-- the code, a decoy block first, no code, a reply cut off at the token limit, a 401. Asserts the
-- retries and their spacing, the candidates written and the manifest, the stored rows, the
-- accounting (tokens, cost), that a second run makes no request, and that the API key is in no
-- output file, database row or message. No network beyond loopback, no GPU.
local cjson = require "cjson"
local sqlite = require "kreach.core.sqlite"
local support = require "support"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local KREACH = require("kreach").executable()
local KEY = "sk-test-9a8b7c6d5e4f3a2b1c0d"
local GOOD = support.slurp(here .. "/../candidates/019_relu.lua")

-- the test server; its base URL with the OpenAI-compatible API's /v1
local function serve(_, script)
  local base, log, stop = support.http_server(script)
  return base .. "/v1", log, stop
end

local function reply(text, finish, tin, tout)
  return { body = { id = "chatcmpl-" .. tin, model = "test-model", choices = { { message = { role = "assistant", content = text },
    finish_reason = finish or "stop" } }, usage = { prompt_tokens = tin, completion_tokens = tout } } }
end

local function generate(dir, base, extra)
  local cmd = ("cd %q && KREACH_TEST_KEY=%s timeout 120 %q generate 19 23 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --samples 2 --concurrency 1 --out %q --db %q --retries 3 %s"):format(
    dir, KEY, KREACH, dir .. "/cfg.lua", base, dir .. "/out", dir .. "/r.db", extra or "")
  return support.sh(cmd)
end

local function slurp_all(paths)
  local t = {}
  for _, p in ipairs(paths) do
    local f = io.open(p, "rb")
    if f then t[#t + 1] = f:read("a"); f:close() end
  end
  return table.concat(t)
end

describe("kreach generate", function()
  it("asks, retries, extracts, writes the candidates and the manifest, stores and accounts; a second run asks nothing", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model", price_in = 2, price_out = 10, temperature = 0.2 }\n')
    local base, log, stop = serve(dir, { ["/v1/chat/completions"] = {
      { status = 429, headers = { ["Retry-After"] = "1" }, body = { error = { message = "rate limited" } } },
      reply("Here is the kernel.\n```lua\n" .. GOOD .. "```\nIt is fast.", "stop", 100, 200),
      reply("A sketch:\n```lua\nprint('draft')\n```\nThe answer:\n```lua\n" .. GOOD .. "```\n", "stop", 110, 210),
      reply("I would use shared memory and warp shuffles.", "stop", 120, 20),
      reply("```lua\nreturn {\n  source = [[\nextern \"C\" __global__ void k(", "length", 130, 4096),
    } })
    local out, rc = generate(dir, base)
    local reqs = log()
    local out2, rc2 = generate(dir, base)
    local reqs2 = log()
    stop()
    assert.equals(0, rc, out)
    -- the requests: 5 (one 429 retried after its Retry-After), none in the second run
    assert.equals(5, #reqs, out)
    assert.is_true(reqs[2].t - reqs[1].t >= 0.98, ("the retry after the 429 came %.3f s later"):format(reqs[2].t - reqs[1].t))
    assert.equals("Bearer " .. KEY, reqs[1].headers.Authorization)
    local body = cjson.decode(reqs[2].body)
    assert.equals("test-model", body.model)
    assert.equals(0.2, body.temperature)
    assert.equals("system", body.messages[1].role)
    assert.matches("19_ReLU", body.messages[2].content)
    assert.equals(0, rc2, out2)
    assert.equals(5, #reqs2)
    assert.matches("0 requests made, 4 answered from", out2)
    -- the accounting: 460 input and 4526 output tokens, at $2 and $10 a million
    assert.matches("4 requests made, 0 answered from .*; 460 input and 4526 output tokens, %$0%.0462; 1 retry", out)
    assert.matches("candidates: 2 of 4 replies %(no code 1, no loadable candidate 1, failed requests 0, truncated 1%)", out)
    -- the two samples without a candidate are judged (incorrect), the two with one are not yet
    assert.matches("correct: not given: 2 of 4 samples judged; kreach eval '19' '", out, 1, true)
    -- the candidates and the manifest
    assert.equals(GOOD, support.slurp(dir .. "/out/019_cfg_s1_t1.lua"))
    assert.equals(GOOD, support.slurp(dir .. "/out/019_cfg_s2_t1.lua"))
    assert.is_nil(io.open(dir .. "/out/023_cfg_s1_t1.lua"))
    local man = cjson.decode(support.slurp(dir .. "/out/manifest.json"))
    assert.equals(2, #man)
    assert.equals("019_cfg_s1_t1.lua", man[1].file)
    assert.equals(19, man[1].problem)
    assert.same({ model = "cfg", sample = 1, turn = 1, request_id = "chatcmpl-100" }, man[1].origin)
    -- the stored rows
    local db = assert(sqlite.open(dir .. "/r.db", { readonly = true }))
    local rows = db:query("SELECT problem_name, sample, status, finish, retries, input_tokens, output_tokens, cost_usd, prompt, request FROM generations ORDER BY id")
    db:close()
    assert.equals(4, #rows)
    local st = {}
    for i, r in ipairs(rows) do st[i] = ("%s/%d/%s/%s/%d"):format(r.problem_name, r.sample, r.status, r.finish, r.retries) end
    assert.same({ "19_ReLU/1/ok/stop/1", "19_ReLU/2/ok/stop/0", "23_Softmax/1/no_code/stop/0", "23_Softmax/2/no_candidate/length/0" }, st)
    assert.is_true(math.abs(rows[1].cost_usd - (100 * 2 + 200 * 10) / 1e6) < 1e-12)
    assert.matches("## Its arguments, in order", rows[1].prompt)
    -- the key: in no file written, no database row, no output
    local files = { dir .. "/r.db", dir .. "/r.db-wal", dir .. "/out/manifest.json", dir .. "/out/019_cfg_s1_t1.lua" }
    assert.is_nil(slurp_all(files):find(KEY, 1, true))
    assert.is_nil((out .. out2):find(KEY, 1, true))
  end)

  it("with --turns 2 sends the first turn's verdict back, and refuses to go on with candidates nobody judged", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model" }\n')
    local base, log, stop = serve(dir, { ["/v1/chat/completions"] = {
      reply("```lua\n" .. GOOD .. "```\n", "stop", 10, 20),
      reply("Fixed:\n```lua\n" .. GOOD:gsub("relu_float4", "relu_float4_v2") .. "```\n", "stop", 30, 40),
    } })
    local function run(extra)
      return support.sh(("cd %q && KREACH_TEST_KEY=%s %q generate 19 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --out %q --db %q --turns 2 %s"):format(
        dir, KEY, KREACH, dir .. "/cfg.lua", base, dir .. "/out", dir .. "/r.db", extra or ""))
    end
    -- turn 1's candidate is not judged, and there is no --eval: the run says how to go on
    local out, rc = run()
    assert.equals(2, rc, out)
    assert.matches("%-%-turns 2 sends each turn's verdicts back: add %-%-eval", out)
    assert.equals(1, #log())
    -- judged as kreach eval would store it (incorrect), the second turn goes out with the verdict
    local store = require "kreach.results.store"
    local db = assert(store.open(dir .. "/r.db"))
    local run_id = db:begin_run{ command = { "kreach", "eval" }, config_hash = "h" }
    db:record_evaluation{ run_id = run_id, problem = { suite = "kernelbench-l1", problem_id = 19, name = "19_ReLU", file_hash = "p" },
      candidate = { hash = require("kreach.core.util").hash(GOOD), path = dir .. "/out/019_cfg_s1_t1.lua", name = "relu_float4", source = GOOD },
      eval_key = "e1", dtype = "f32", verdict = "incorrect", reason = "wrong_values",
      detail = "trial 2 (centred inputs), output 'y': relative L2 0.31" }
    db:close()
    out, rc = run()
    local reqs = log()
    stop()
    assert.equals(0, rc, out)
    assert.equals(2, #reqs, out)
    local body = cjson.decode(reqs[2].body)
    assert.equals(4, #body.messages) -- system, the prompt, the first reply, the feedback
    assert.equals("assistant", body.messages[3].role)
    assert.matches("relu_float4", body.messages[3].content)
    assert.equals("user", body.messages[4].role)
    assert.matches("judged incorrect %(wrong_values%)", body.messages[4].content)
    assert.matches("relative L2 0%.31", body.messages[4].content)
    assert.equals(GOOD:gsub("relu_float4", "relu_float4_v2"), support.slurp(dir .. "/out/019_cfg_s1_t2.lua"))
    local man = cjson.decode(support.slurp(dir .. "/out/manifest.json"))
    assert.equals(2, #man)
    assert.equals(2, man[2].origin.turn)
    assert.matches("1 request made, 1 answered from", out)
  end)

  it("asks again, on the next run, only what failed (a resumed run), through the Anthropic API", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "anthropic", model = "claude-test", api_key_env = "KREACH_TEST_KEY" }\n')
    local function msg(text, tin, tout)
      return { body = { id = "msg_" .. tin, type = "message", model = "claude-test", content = { { type = "text", text = text } },
        stop_reason = "end_turn", usage = { input_tokens = tin, output_tokens = tout } } }
    end
    local base, log, stop = serve(dir, { ["/v1/messages"] = {
      msg("```lua\n" .. GOOD .. "```", 5, 6),
      { status = 503, body = "overloaded" },
      msg("```lua\n" .. GOOD .. "```", 7, 8),
    } })
    local function run()
      return support.sh(("cd %q && KREACH_TEST_KEY=%s %q generate 19 --model %q --base-url %q --samples 2 --concurrency 1 --retries 0 --out %q --db %q"):format(
        dir, KEY, KREACH, dir .. "/cfg.lua", base:gsub("/v1$", ""), dir .. "/out", dir .. "/r.db"))
    end
    -- a request that failed after its retries (here none): exit 1, what came is kept
    local out, rc = run()
    assert.equals(1, rc, out)
    assert.matches("candidates: 1 of 2 replies %(no code 0, no loadable candidate 0, failed requests 1", out)
    assert.matches("kreach generate: 1 of 2 requests failed after their retries", out)
    assert.matches("correct: not given: 1 of 2 samples have a request that failed", out)
    assert.equals(GOOD, support.slurp(dir .. "/out/019_cfg_s1_t1.lua"))
    assert.equals(1, #cjson.decode(support.slurp(dir .. "/out/manifest.json")))
    local out2, rc2 = run()
    local reqs = log()
    stop()
    assert.equals(0, rc2, out2)
    assert.equals(3, #reqs)
    assert.equals(KEY, reqs[1].headers["x-api-key"])
    assert.matches("1 request made, 1 answered from", out2)
    assert.matches("candidates: 2 of 2 replies", out2)
    assert.equals(GOOD, support.slurp(dir .. "/out/019_cfg_s2_t1.lua"))
  end)

  it("exits 1 when requests fail (no server): no correct rate or evaluation figures, and nothing judged", function()
    local dir = support.tmpdir()
    local out, rc = support.sh(("cd %q && KREACH_TEST_KEY=%s timeout 120 %q generate 19 --model m --provider openai --base-url http://127.0.0.1:9/v1 --api-key-env KREACH_TEST_KEY --samples 2 --retries 0 --out %q --db %q"):format(
      dir, KEY, KREACH, dir .. "/out", dir .. "/r.db"))
    assert.equals(1, rc, out)
    assert.matches("failed requests 2", out)
    assert.matches("kreach generate: 2 of 2 requests failed after their retries %(transport errors, timeouts", out)
    assert.is_nil(out:find("correct: 0", 1, true), out)
    assert.is_nil(out:find("evaluated", 1, true), out)
    assert.is_nil(out:find("invalid_candidate", 1, true), out)
    -- the failures are stored, and the manifest written (empty)
    local db = assert(sqlite.open(dir .. "/r.db", { readonly = true }))
    local rows = db:query("SELECT status FROM generations")
    db:close()
    assert.equals(2, #rows)
    assert.equals("error", rows[1].status)
    assert.same({}, cjson.decode(support.slurp(dir .. "/out/manifest.json")))
    -- --json: the same status, the count in the summary
    out, rc = support.sh(("cd %q && KREACH_TEST_KEY=%s timeout 120 %q generate 19 --model m --provider openai --base-url http://127.0.0.1:9/v1 --api-key-env KREACH_TEST_KEY --retries 0 --out %q --db %q --json"):format(
      dir, KEY, KREACH, dir .. "/out", dir .. "/r.db"))
    assert.equals(1, rc, out)
    assert.matches("kreach generate: 1 of 1 requests failed", out)
    local j = cjson.decode(out:match("^[^{]*(%b{})"))
    assert.equals(1, j.summary.errors)
    assert.equals(1, j.summary.failed_samples)
    assert.is_nil(j.summary.correct_rate)
    assert.is_nil(j.summary.evaluation)
  end)

  it("asks for KernelBench's format with --format python and writes a .py candidate", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model" }\n')
    local py = "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    local base, log, stop = serve(dir, { ["/v1/chat/completions"] = { reply("```python\n" .. py .. "```\n", "stop", 1, 2) } })
    local out, rc = support.sh(("cd %q && KREACH_TEST_KEY=%s %q generate 19 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --format python --out %q --db %q --json"):format(
      dir, KEY, KREACH, dir .. "/cfg.lua", base, dir .. "/out", dir .. "/r.db"))
    local reqs = log()
    stop()
    assert.equals(0, rc, out)
    local prompt = cjson.decode(reqs[1].body).messages[2].content
    assert.matches("a Python file defining ModelNew", prompt)
    assert.matches("load_inline", prompt)
    assert.equals(py, support.slurp(dir .. "/out/019_cfg_s1_t1.py"))
    local j = cjson.decode(out:match("(%b{})%s*$"))
    assert.equals(1, j.summary.candidates)
    assert.equals("ok", j.generations[1].status)
    assert.equals("019_cfg_s1_t1.py", j.generations[1].file)
    assert.equals("019_cfg_s1_t1.py", cjson.decode(support.slurp(dir .. "/out/manifest.json"))[1].file)
  end)

  it("gives the correct rate, pass@k and kreach eval's figures once the candidates are judged", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model" }\n')
    local other = GOOD:gsub("relu_float4", "relu_other")
    local base, _, stop = serve(dir, { ["/v1/chat/completions"] = {
      reply("```lua\n" .. GOOD .. "```", "stop", 1, 2), reply("```lua\n" .. other .. "```", "stop", 3, 4) } })
    local function run()
      return support.sh(("cd %q && KREACH_TEST_KEY=%s %q generate 19 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --samples 2 --concurrency 1 --out %q --db %q"):format(
        dir, KEY, KREACH, dir .. "/cfg.lua", base, dir .. "/out", dir .. "/r.db"))
    end
    local out, rc = run()
    assert.equals(0, rc, out)
    assert.matches("correct: not given: 0 of 2 samples judged; kreach eval '19' '", out, 1, true)
    -- judged as kreach eval stores it: sample 1 correct (1.5x [1.2, 1.8] over the baseline, 2x
    -- over PyTorch), sample 2 incorrect
    local store = require "kreach.results.store"
    local util = require "kreach.core.util"
    local db = assert(store.open(dir .. "/r.db"))
    local run_id = db:begin_run{ command = { "kreach", "eval" }, config_hash = "h" }
    local prob = { suite = "kernelbench-l1", problem_id = 19, name = "19_ReLU", file_hash = "p" }
    db:record_evaluation{ run_id = run_id, problem = prob, eval_key = "e1", dtype = "f32", verdict = "correct",
      candidate = { hash = util.hash(GOOD), path = "a.lua", source = GOOD },
      speedup = 1.5, speedup_lo = 1.2, speedup_hi = 1.8, speedup_pytorch = 2.0, speedup_pytorch_lo = 1.9, speedup_pytorch_hi = 2.1 }
    db:record_evaluation{ run_id = run_id, problem = prob, eval_key = "e2", dtype = "f32", verdict = "incorrect",
      reason = "wrong_values", candidate = { hash = util.hash(other), path = "b.lua", source = other } }
    db:close()
    out, rc = run()
    stop()
    assert.equals(0, rc, out)
    assert.matches("0 requests made, 2 answered", out)
    assert.matches("correct: 1 of 2 samples %(50%.0%%%); pass@1 0%.500, pass@2 1%.000", out)
    assert.matches("against kreach's baseline: wins 1 %(50%.0%%", out)
    assert.matches("fast_1 50%.0%%, fast_1%.5 0%.0%%", out)
    assert.matches("against PyTorch eager %(KernelBench's fast_p%): wins 1", out)
    assert.matches("verdicts: correct 1, incorrect 1", out)
  end)

  it("stops at a 401 with the provider's message, the key redacted, before asking more", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model" }\n')
    local base, log, stop = serve(dir, { ["/v1/chat/completions"] = {
      { status = 401, body = { error = { message = "Incorrect API key provided: " .. KEY .. "\27[2K\rok" } } } } })
    local out, rc = generate(dir, base)
    local reqs = log()
    stop()
    assert.equals(1, rc, out)
    assert.equals(1, #reqs)
    -- the key redacted, and the terminal escapes the server sent shown, not obeyed
    assert.matches("stopped at the first request: HTTP 401: Incorrect API key provided: %[redacted%]\\x1b%[2K\\x0dok", out)
    assert.is_nil(out:find("\27", 1, true))
    assert.is_nil(out:find(KEY, 1, true))
    assert.is_nil(slurp_all({ dir .. "/r.db", dir .. "/r.db-wal" }):find(KEY, 1, true))
  end)

  it("refuses to overwrite a manifest that does not read, naming it, before any request", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model" }\n')
    os.execute(("mkdir -p %q"):format(dir .. "/out"))
    support.spit(dir .. "/out/manifest.json", '[{"file": "a.lua", "problem": 19}, ')
    local base, log, stop = serve(dir, { ["/v1/chat/completions"] = { reply("```lua\n" .. GOOD .. "```", "stop", 1, 1) } })
    local out, rc = generate(dir, base)
    local reqs = log()
    stop()
    assert.equals(3, rc, out)
    assert.matches("out/manifest%.json: not a manifest", out)
    assert.equals(0, #reqs)
    assert.equals('[{"file": "a.lua", "problem": 19}, ', support.slurp(dir .. "/out/manifest.json"))
  end)

  it("on the host device: --eval refuses before any request, and the prompt states no emulated GPU", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model" }\n')
    local base, log, stop = serve(dir, { ["/v1/chat/completions"] = { reply("```lua\n" .. GOOD .. "```", "stop", 1, 1) } })
    local out, rc = support.sh(("cd %q && KREACH_DEVICE=host KREACH_TEST_KEY=%s %q generate 19 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --out %q --db %q --eval"):format(
      dir, KEY, KREACH, dir .. "/cfg.lua", base, dir .. "/out", dir .. "/r.db"))
    local reqs = log()
    assert.equals(77, rc, out)
    assert.matches("kreach: no CUDA device: kreach generate %-%-eval needs a GPU; this is the host device", out)
    assert.equals(0, #reqs)
    out, rc = support.sh(("cd %q && KREACH_DEVICE=host KREACH_TEST_KEY=%s %q generate 19 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --out %q --db %q"):format(
      dir, KEY, KREACH, dir .. "/cfg.lua", base, dir .. "/out", dir .. "/r.db"))
    reqs = log()
    stop()
    assert.equals(0, rc, out)
    assert.equals(1, #reqs)
    local body = cjson.decode(reqs[1].body)
    assert.matches("The target GPU was not known when this prompt was built", body.messages[2].content)
    assert.is_nil(body.messages[2].content:find("emulation", 1, true))
  end)

  it("answers a rerun on another machine (other device facts, no GPU, no API key, another base URL) from the database", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { provider = "openai", model = "test-model", temperature = 0.2, price_in = 2, price_out = 10 }\n')
    -- machine A: a GPU's facts, as kreach.device.cuda() gives them (faked: this test needs no GPU)
    support.spit(dir .. "/gpu_a.lua", [[
require("kreach.device").cuda = function()
  return { name = "NVIDIA H100 80GB HBM3", arch = "sm_90", sm_count = 132, shared_per_block_optin_bytes = 232448,
           shared_per_sm_bytes = 233472, l2_bytes = 52428800, memory_bytes = 85520809984,
           memory_clock_khz = 2619000, memory_bus_bits = 5120 }
end
os.exit(require("kreach.cli").main(table.unpack(arg)))
]])
    local base, log, stop = serve(dir, { ["/v1/chat/completions"] = {
      reply("```lua\n" .. GOOD .. "```\n", "stop", 100, 200),
      reply("No code, only words.", "stop", 110, 20),
      reply("```lua\n" .. GOOD .. "```\n", "stop", 120, 200),
    } })
    local function run(env, driver, url, extra)
      return support.sh(("cd %q && %s timeout 120 %q %s generate 19 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --samples 2 --concurrency 1 --out %q --db %q %s"):format(
        dir, env, KREACH, driver, dir .. "/cfg.lua", url, dir .. "/out", dir .. "/r.db", extra or ""))
    end
    local on_a = ("env KREACH_TEST_KEY=%s"):format(KEY)
    local on_b = "env -u KREACH_TEST_KEY KREACH_DEVICE=host" -- no key, no GPU
    local files = { "/out/manifest.json", "/out/019_cfg_s1_t1.lua" }
    local function snapshot()
      local t = {}
      for i, f in ipairs(files) do t[i] = support.slurp(dir .. f) end
      return t
    end
    -- on A: two requests, the prompt with A's device; then A's own rerun, from the database
    local out, rc = run(on_a, ("%q"):format(dir .. "/gpu_a.lua"), base)
    local reqs = log()
    assert.equals(0, rc, out)
    assert.equals(2, #reqs, out)
    assert.matches("The target GPU: NVIDIA H100 80GB HBM3, sm_90, 132 SMs", cjson.decode(reqs[1].body).messages[2].content)
    local files_a = snapshot()
    local again_a, rc_a = run(on_a, ("%q"):format(dir .. "/gpu_a.lua"), base)
    local again_a_json = run(on_a, ("%q"):format(dir .. "/gpu_a.lua"), base, "--json")
    assert.equals(0, rc_a, again_a)
    assert.equals(2, #log())
    assert.matches("0 requests made, 2 answered from", again_a)
    -- on B (the host device: the prompt would say no GPU was known), without the key, through
    -- another base URL (nothing listens there): no request, the same candidates, manifest and summary
    local out_b, rc_b = run(on_b, "", "http://127.0.0.1:9/v1")
    local out_b_json = run(on_b, "", "http://127.0.0.1:9/v1", "--json")
    assert.equals(0, rc_b, out_b)
    assert.equals(2, #log())
    assert.equals(again_a, out_b)
    assert.equals(again_a_json, out_b_json)
    assert.same(files_a, snapshot())
    -- the rows keep what was sent: A's device, in the prompt and in the request's body
    local db = assert(sqlite.open(dir .. "/r.db", { readonly = true }))
    local rows = db:query("SELECT prompt, request FROM generations ORDER BY id")
    db:close()
    assert.equals(2, #rows)
    for _, r in ipairs(rows) do
      assert.matches("## The device\nThe target GPU: NVIDIA H100 80GB HBM3", r.prompt)
      assert.matches("The target GPU: NVIDIA H100 80GB HBM3", cjson.decode(r.request).body.messages[2].content)
    end
    -- on B, a job the database does not hold (a third sample), or --refresh: the key is needed,
    -- a usage error before any request, and nothing written
    local out3, rc3 = run(on_b, "", base, "--samples 3")
    assert.equals(2, rc3, out3)
    assert.matches("^kreach generate: the API key: %$KREACH_TEST_KEY is not set", out3)
    out3, rc3 = run(on_b, "", base, "--refresh")
    assert.equals(2, rc3, out3)
    assert.matches("^kreach generate: the API key: %$KREACH_TEST_KEY is not set", out3)
    assert.equals(2, #log())
    assert.same(files_a, snapshot())
    -- with the key, on B, the third sample is asked (with B's prompt), the two others not
    out3, rc3 = support.sh(("cd %q && env KREACH_DEVICE=host KREACH_TEST_KEY=%s %q generate 19 --model %q --base-url %q --api-key-env KREACH_TEST_KEY --samples 3 --out %q --db %q"):format(
      dir, KEY, KREACH, dir .. "/cfg.lua", base, dir .. "/out", dir .. "/r.db"))
    reqs = log()
    stop()
    assert.equals(0, rc3, out3)
    assert.equals(3, #reqs, out3)
    assert.matches("The target GPU was not known when this prompt was built", cjson.decode(reqs[3].body).messages[2].content)
    assert.matches("1 request made, 2 answered from", out3)
  end)

  it("refuses a model configuration with an unknown field, naming the file", function()
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", 'return { model = "m", temprature = 0.1 }\n')
    local out, rc = generate(dir, "http://127.0.0.1:9/v1")
    assert.equals(3, rc, out)
    assert.matches("cfg%.lua: unknown field 'temprature'", out)
  end)
  it("refuses a model configuration whose values no API takes, or that does not end, naming the file, before any request", function()
    local dir = support.tmpdir()
    local cases = {
      { 'return { model = "m", temperature = 0/0 }', "cfg%.lua: field 'temperature' is NaN: a finite number >= 0" },
      { 'return { model = "m", temperature = -0.5 }', "cfg%.lua: field 'temperature' is %-0%.5: a finite number >= 0" },
      { 'return { model = "m", max_tokens = 1.5 }', "cfg%.lua: field 'max_tokens' is 1%.5: a positive integer" },
      { 'return { model = "m", max_tokens = 0 }', "cfg%.lua: field 'max_tokens' is 0: a positive integer" },
      { 'return { model = "m", top_p = 1.5 }', "cfg%.lua: field 'top_p' is 1%.5" },
      { 'return { model = "m", price_out = 1/0 }', "cfg%.lua: field 'price_out' is inf" },
      { 'return { model = "m", price_in = -3 }', "cfg%.lua: field 'price_in' is %-3" },
      { 'return { model = "m", temperature = "0.2" }', "cfg%.lua: field 'temperature' is a string, not a number" },
      { 'return { model = "m", extra = { thinking = { budget_tokens = 0/0 } } }', "cfg%.lua: field extra%.thinking%.budget_tokens is NaN, not a finite number" },
      { 'return { model = "m", extra = { f = tostring } }', "cfg%.lua: field extra%.f is a function" },
      { 'return { model = "m", extra = { max_tokens = 5 } }', "cfg%.lua: field 'extra': 'max_tokens' is a request field kreach sets" },
      { 'return { model = "m", api_key_env = "A B" }', "cfg%.lua: field 'api_key_env' is A B" },
      { 'if true then error("no such model") end return {}', "cfg%.lua:1: no such model" },
      -- a configuration that never ends, or eats the memory, stops at the loader's limits
      { 'while true do end', "cfg%.lua:1: ran past its step limit" },
      { 'local t = {} for i = 1, 1e9 do t[i] = ("x"):rep(100) .. i end return t', "cfg%.lua: loading it asked for more than 64 MiB" },
    }
    local base, log, stop = serve(dir, { ["/v1/chat/completions"] = { reply("```lua\n" .. GOOD .. "```", "stop", 1, 1) } })
    for _, c in ipairs(cases) do
      support.spit(dir .. "/cfg.lua", c[1] .. "\n")
      local t0 = require("kreach.core").now()
      local out, rc = generate(dir, base, "--timeout 1")
      local dt = require("kreach.core").now() - t0
      assert.equals(3, rc, c[1] .. ": " .. out)
      assert(out:match(c[2]), c[1] .. ": " .. out)
      assert.is_nil(out:find("traceback", 1, true), out)
      assert.is_true(dt < 20, ("%s: %.1f s"):format(c[1], dt))
    end
    -- a base URL that is not http or https: libcurl would read the file
    support.spit(dir .. "/cfg.lua", 'return { model = "m", base_url = "file:///etc/passwd" }\n')
    local out, rc = support.sh(("cd %q && KREACH_TEST_KEY=k timeout 60 %q generate 19 --model %q --api-key-env KREACH_TEST_KEY --retries 0 --out %q --db %q"):format(
      dir, KREACH, dir .. "/cfg.lua", dir .. "/out", dir .. "/r.db"))
    local reqs = log()
    stop()
    assert.equals(3, rc, out)
    assert.matches("cfg%.lua: field 'base_url' %('file:///etc/passwd'%): the scheme 'file' is not http or https", out)
    assert.is_nil(out:find("root:", 1, true))
    assert.equals(0, #reqs)
  end)
end)

describe("experiments/generate/e2e.lua", function()
  it("runs the pipeline against its local model server (without --eval: no GPU)", function()
    local dir = support.tmpdir()
    local out, rc = support.sh(("%q %q --out %q --db %q"):format(KREACH, here .. "/../../experiments/generate/e2e.lua",
      dir .. "/out", dir .. "/e2e.db"))
    assert.equals(0, rc, out)
    assert.matches("36 requests made, 0 answered", out)
    assert.matches("candidates: 34 of 36 replies %(no code 2, no loadable candidate 0, failed requests 0", out)
    local man = cjson.decode(support.slurp(dir .. "/out/manifest.json"))
    assert.equals(34, #man)
    -- a problem with an example candidate got it back
    assert.equals(support.slurp(here .. "/../../examples/023_softmax_online.lua"), support.slurp(dir .. "/out/023_e2e-local_s2_t1.lua"))
  end)
end)
