-- kreach generate's pieces without a GPU (issue 19): the candidate extracted from replies (prose
-- around the code, a decoy block first, a broken last block, no code, a reply cut off, the
-- KernelBench format), and both providers' requests and replies, through a real HTTP server on
-- 127.0.0.1 (tests/http_server.py): the right endpoint, headers and body, the tokens, the stop
-- reason, the provider's error message with the key redacted from it.
local extract = require "kreach.generate.extract"
local providers = require "kreach.generate.providers"
local http = require "kreach.http"
local cjson = require "cjson"
local support = require "support"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local KEY = "sk-ant-test-0d9c8b7a6f5e4d3c"
local GOOD = support.slurp(here .. "/../candidates/019_relu.lua")

local serve = support.http_server

local function fenced(lang, code) return "```" .. lang .. "\n" .. code .. "```\n" end

describe("extracting the candidate from a reply", function()
  it("finds the block among prose", function()
    local c = assert(extract.candidate("Here is a fast ReLU.\n\n" .. fenced("lua", GOOD) .. "\nIt uses float4 loads.", "lua"))
    assert.equals(GOOD, c.code)
    assert.equals(1, c.blocks)
    assert.is_false(c.unterminated)
  end)

  it("takes the last block that loads, past a decoy and a broken final block", function()
    local decoy = "print('this is a test')\n"
    local broken = "return { source = [[ x ]] }\n" -- no forward: not a candidate
    local text = "First, a sketch:\n" .. fenced("lua", decoy) .. "The kernel:\n" .. fenced("lua", GOOD)
      .. "A variant I did not finish:\n" .. fenced("lua", broken)
    local c = assert(extract.candidate(text, "lua"))
    assert.equals(GOOD, c.code)
    assert.equals(2, c.index)
    assert.equals(3, c.blocks)
    -- only blocks that load: the decoy alone is no candidate
    local none, reason, why = extract.candidate(fenced("lua", decoy), "lua")
    assert.is_nil(none)
    assert.equals("no_candidate", reason)
    assert.matches("the block:1: attempt to call a nil value %(global 'print'%)", why)
  end)

  it("says no_code for a reply without a block in the language", function()
    local c, reason = extract.candidate("I cannot help with that.", "lua")
    assert.is_nil(c)
    assert.equals("no_code", reason)
    c, reason = extract.candidate(fenced("python", "class ModelNew: pass\n"), "lua")
    assert.is_nil(c)
    assert.equals("no_code", reason)
  end)

  it("keeps a block cut off by the end of the reply, marked unterminated", function()
    local b = extract.blocks("text\n```lua\nreturn {\n  source = [[")
    assert.equals(1, #b)
    assert.is_true(b[1].unterminated)
    local c, reason = extract.candidate("text\n```lua\nreturn {\n  source = [[", "lua")
    assert.is_nil(c)
    assert.equals("no_candidate", reason)
  end)

  it("loads a hostile block in the sandbox, under the step limit and a heap cap, and goes on", function()
    local bomb = "return { source = string.rep('x', 2^30), forward = function() end }\n"
    local c, reason, why = extract.candidate(fenced("lua", bomb), "lua")
    assert.is_nil(c)
    assert.equals("no_candidate", reason)
    assert.equals("the block: loading it asked for more than 64 MiB", why)
    c, reason, why = extract.candidate(fenced("lua", "while true do end\n"), "lua")
    assert.equals("no_candidate", reason)
    assert.matches("the block:1: ran past its step limit", why)
    c, reason, why = extract.candidate(fenced("lua", "return io.open('/etc/passwd'):read('a')\n"), "lua")
    assert.equals("no_candidate", reason)
    assert.matches("attempt to index a nil value %(global 'io'%)", why)
    -- an earlier good block is still taken, and the heap is uncapped again
    assert.equals(GOOD, extract.candidate(fenced("lua", GOOD) .. fenced("lua", bomb), "lua").code)
    assert.is_nil(require("kreach.core.util").heap_limit(nil))
    assert.equals(2 ^ 26, #string.rep("x", 2 ^ 26))
  end)

  it("reads KernelBench's format: the last Python block defining ModelNew", function()
    local py = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n"
    local text = fenced("python", "import torch\nx = 1\n") .. fenced("python", py) .. fenced("bash", "pip install torch\n")
    local c = assert(extract.candidate(text, "python"))
    assert.equals(py, c.code)
    assert.equals(2, c.index)
    assert.has_error(function() extract.candidate("", "cuda") end, "extract: unknown format 'cuda' (lua, python)")
  end)
end)

describe("the providers", function()
  it("put the key in the request's headers and nowhere in its record", function()
    for _, p in ipairs({ "openai", "anthropic" }) do
      local req, rec = providers.request(p, { base = "http://h/x/", model = "m", key = KEY, system = "be brief",
                                              prompt = "hello", temperature = 0.5, max_tokens = 100 })
      assert.is_truthy(table.concat(req.headers, "\n"):find(KEY, 1, true), p)
      assert.is_nil(cjson.encode(rec):find(KEY, 1, true), p)
      assert.is_nil(req.body:find(KEY, 1, true), p)
    end
    assert.has_error(function() providers.request("gemini", { model = "m" }) end, "unknown provider 'gemini' (openai, anthropic)")
  end)

  it("talk to each API on 127.0.0.1 and read its reply, its tokens and its stop reason", function()
    local base, log, stop = serve({
      ["/v1/chat/completions"] = { { body = { id = "chatcmpl-1", model = "m", choices = { { message = { role = "assistant",
        content = "ok\n" .. fenced("lua", GOOD) }, finish_reason = "stop" } }, usage = { prompt_tokens = 120, completion_tokens = 340 } } } },
      ["/v1/messages"] = { { headers = { ["request-id"] = "req_9" }, body = { id = "msg_1", model = "c", type = "message",
        content = { { type = "text", text = "part one" }, { type = "text", text = "part two" } }, stop_reason = "max_tokens",
        usage = { input_tokens = 50, output_tokens = 4096 } } } },
    })
    local oreq = providers.request("openai", { base = base .. "/v1", model = "m", key = KEY, prompt = "write relu" })
    local areq = providers.request("anthropic", { base = base, model = "c", key = KEY, system = "sys", prompt = "write relu" })
    local ok, res = pcall(http.run, { oreq, areq }, { base_delay_s = 0.05, timeout_s = 5 })
    local reqs = log()
    stop()
    assert(ok, res)
    local o = providers.parse("openai", res[1], { KEY })
    assert.is_true(o.ok)
    assert.equals("stop", o.finish)
    assert.is_false(o.truncated)
    assert.equals(120, o.input_tokens)
    assert.equals(340, o.output_tokens)
    assert.equals("chatcmpl-1", o.request_id)
    assert.equals(GOOD, extract.candidate(o.text, "lua").code)
    local a = providers.parse("anthropic", res[2], { KEY })
    assert.is_true(a.ok)
    assert.equals("part one\npart two", a.text)
    assert.is_true(a.truncated)
    assert.equals(4096, a.output_tokens)
    -- what the server received
    local by = {}
    for _, r in ipairs(reqs) do by[r.path] = r end
    assert.equals("Bearer " .. KEY, by["/v1/chat/completions"].headers.Authorization)
    assert.equals(KEY, by["/v1/messages"].headers["x-api-key"])
    assert.equals(providers.ANTHROPIC_VERSION, by["/v1/messages"].headers["anthropic-version"])
    local ob, ab = cjson.decode(by["/v1/chat/completions"].body), cjson.decode(by["/v1/messages"].body)
    assert.equals("write relu", ob.messages[1].content)
    assert.equals("user", ob.messages[1].role)
    assert.equals("sys", ab.system)
    assert.equals(4096, ab.max_tokens)
  end)

  it("report the provider's error message, with the key redacted from it", function()
    local r = { status = 401, body = cjson.encode({ error = { message = "Incorrect API key provided: " .. KEY } }), headers = {} }
    local p = providers.parse("openai", r, { KEY })
    assert.is_false(p.ok)
    assert.equals("http", p.kind)
    assert.equals("HTTP 401: Incorrect API key provided: [redacted]", p.message)
    p = providers.parse("anthropic", { status = 200, body = "<html>", headers = {} }, { KEY })
    assert.equals("format", p.kind)
    p = providers.parse("openai", { status = 0, error = "Connection refused", body = "" }, { KEY })
    assert.equals("transport", p.kind)
    -- a status line, then the transfer failed: not a reply to read
    p = providers.parse("openai", { status = 200, error = "transfer closed with 93 bytes remaining", body = '{"cho' }, { KEY })
    assert.equals("transport", p.kind)
    assert.equals("transfer closed with 93 bytes remaining", p.message)
  end)
end)

describe("the shipped model configurations", function()
  it("load, and build their requests (the reasoning one with its thinking budget)", function()
    local models = require "kreach.generate.models"
    local lfs = require "lfs"
    local dir = here .. "/../../experiments/models"
    local n = 0
    for f in lfs.dir(dir) do
      if f:match("%.lua$") then
        local c = models.load(dir .. "/" .. f)
        local req, rec = providers.request(c.provider, { base = c.base_url, model = c.model, key = "k", prompt = "p",
          temperature = c.temperature, max_tokens = c.max_tokens, extra = c.extra })
        assert.is_string(req.url)
        if f == "frontier-reasoning.lua" then assert.equals(16000, rec.body.thinking.budget_tokens) end
        if c.provider == "openai" then assert.equals("none", c.api_key_env) end
        n = n + 1
      end
    end
    assert.equals(5, n)
  end)
end)

describe("the cache key of a generation (kreach.generate.session.job_key)", function()
  local session = require "kreach.generate.session"
  local prompt = require "kreach.generate.prompt"
  local H100 = { name = "NVIDIA H100 80GB HBM3", arch = "sm_90", sm_count = 132, shared_per_block_optin_bytes = 232448,
                 shared_per_sm_bytes = 233472, l2_bytes = 52428800, memory_bytes = 85520809984 }
  local function settings(cfg, extra)
    local dir = support.tmpdir()
    support.spit(dir .. "/cfg.lua", cfg .. "\n")
    local args = { model = dir .. "/cfg.lua", api_key_env = "none" }
    for k, v in pairs(extra or {}) do args[k] = v end
    return session.configure(args)
  end

  it("leaves out the device's facts, in every turn, and the base URL; keeps the model, the sampling, the sample and the turn", function()
    local inst = session.problems({ "19" }, "f32")[1]
    local s = settings('return { provider = "openai", model = "m", temperature = 0.2 }')
    local pa, pb = prompt.build(inst, { device = H100 }), prompt.build(inst)
    -- the prompts differ in the device's section only, and their portable forms not at all
    assert.are_not.equal(pa.user, pb.user)
    assert.matches("The target GPU: NVIDIA H100 80GB HBM3", pa.user, 1, true)
    assert.equals(pa.portable, pb.portable)
    local i, j = pa.portable:find(prompt.DEVICE_PLACEHOLDER, 1, true)
    assert.equals(pa.user, pa.portable:sub(1, i - 1) .. pa.device .. pa.portable:sub(j + 1))
    local function conv(p, turn)
      local m = { { role = "user", content = p.user } }
      if turn == 2 then
        m[2] = { role = "assistant", content = "```lua\nreturn {}\n```" }
        m[3] = { role = "user", content = prompt.feedback{ verdict = "incorrect", reason = "wrong_values" } }
      end
      return m
    end
    for turn = 1, 2 do
      assert.equals(session.job_key(s, pa, conv(pa, turn), 1, turn), session.job_key(s, pb, conv(pb, turn), 1, turn))
    end
    local k = session.job_key(s, pa, conv(pa, 1), 1, 1)
    -- another server of the same model: the same key (the base URL is stored, not keyed)
    local s_url = settings('return { provider = "openai", model = "m", temperature = 0.2, base_url = "http://127.0.0.1:8000/v1" }')
    assert.equals(k, session.job_key(s_url, pa, conv(pa, 1), 1, 1))
    assert.are_not.equal(s.config_hash, s_url.config_hash)
    -- what changes the reply changes the key
    local others = {
      session.job_key(settings('return { provider = "openai", model = "m2", temperature = 0.2 }'), pa, conv(pa, 1), 1, 1),
      session.job_key(settings('return { provider = "openai", model = "m", temperature = 0.3 }'), pa, conv(pa, 1), 1, 1),
      session.job_key(settings('return { provider = "openai", model = "m", temperature = 0.2 }', { max_tokens = 100 }), pa, conv(pa, 1), 1, 1),
      session.job_key(settings('return { provider = "anthropic", model = "m", temperature = 0.2 }'), pa, conv(pa, 1), 1, 1),
      session.job_key(settings('return { provider = "openai", model = "m", temperature = 0.2, extra = { seed = 1 } }'), pa, conv(pa, 1), 1, 1),
      session.job_key(s, pa, conv(pa, 1), 2, 1),
      session.job_key(s, pa, conv(pa, 1), 1, 2),
      session.job_key(s, pa, conv(pa, 2), 1, 2),
    }
    local pc = prompt.build(session.problems({ "23" }, "f32")[1], { device = H100 })
    others[#others + 1] = session.job_key(s, pc, conv(pc, 1), 1, 1)
    local py = prompt.build(inst, { device = H100, format = "python" })
    others[#others + 1] = session.job_key(settings('return { provider = "openai", model = "m", temperature = 0.2 }', { format = "python" }), py, conv(py, 1), 1, 1)
    local seen = { [k] = true }
    for i, o in ipairs(others) do
      assert.is_nil(seen[o], "key " .. i .. " is another's")
      seen[o] = true
    end
  end)

  it("needs the API key only when asked to (need_key): configure takes an unset variable", function()
    local s = settings('return { provider = "openai", model = "m" }', { api_key_env = "KREACH_TEST_NO_SUCH_VARIABLE" })
    assert.is_nil(s.key)
    local ok, e = pcall(session.need_key, s)
    assert.is_false(ok)
    assert.matches("the API key: %$KREACH_TEST_NO_SUCH_VARIABLE is not set", require("kreach.errors").message(e))
    assert.equals(2, require("kreach.errors").status(e))
    assert.is_true(pcall(session.need_key, settings('return { provider = "openai", model = "m" }')))
  end)
end)
