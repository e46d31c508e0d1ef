-- kreach generate <suite|problem...> --model NAME: asks a language model for candidates (issue 19,
-- in progress: one turn, no --eval yet). For each problem and sample it builds the prompt from
-- the problem alone (kreach.generate.prompt), asks through the provider's API (kreach.http:
-- requests in flight up to --concurrency, retries with backoff), takes the candidate from the
-- reply (kreach.generate.extract), writes it to --out DIR with a manifest.json that `kreach eval`
-- reads, and stores every request and reply in the results database, keyed so that a second
-- identical run makes no request. The API key is read from the environment only and written
-- nowhere. docs/generate.md.
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local problem = require "kreach.problem"
local store = require "kreach.store"
local util = require "kreach.core.util"
local kcore = require "kreach.core"
local http = require "kreach.http"
local providers = require "kreach.generate.providers"
local extract = require "kreach.generate.extract"
local prompt_mod = require "kreach.generate.prompt"
local models = require "kreach.generate.models"
local lfs = require "lfs"

local function mkdir_p(path)
  local acc = path:sub(1, 1) == "/" and "" or "."
  for part in path:gmatch("[^/]+") do
    acc = acc .. "/" .. part
    if not lfs.attributes(acc, "mode") then
      local ok, err = lfs.mkdir(acc)
      if not ok then errors.file(acc, "cannot create the directory: " .. tostring(err)) end
    end
  end
end

local function write(path, text)
  local f, err = io.open(path, "w")
  if not f then errors.file(path, err) end
  f:write(text)
  f:close()
end

-- unbiased pass@k (Chen et al.): 1 - C(n - c, k) / C(n, k)
local function pass_at_k(n, c, k)
  if n - c < k then return 1 end
  local p = 1
  for i = n - c + 1, n do p = p * (1 - k / i) end
  return 1 - p
end

return {
  summary = "Ask a language model for candidates: prompts built from the problems, replies stored, candidates written for kreach eval.",
  parser = function(p)
    p:argument("targets", "A suite (kreach list), or problems (files, ids or names)."):args("+")
    p:option("--model", "A model configuration (experiments/models/NAME.lua, or a .lua file) or a bare model id.")
    p:option("--provider", "openai (Chat Completions, and vLLM, SGLang, llama.cpp, Ollama) or anthropic (Messages).")
      :choices({ "openai", "anthropic" })
    p:option("--base-url", "The API's base URL (default: the provider's).")
    p:option("--api-key-env", "The environment variable holding the API key ('none': a server without one).")
    p:option("--samples", "Samples per problem.", "1"):convert(cli.positive_integer)
    p:option("--out", "Where the candidates and manifest.json go.", "generated")
    cli.db_option(p)
    p:option("--concurrency", "Requests in flight at once.", "4"):convert(cli.positive_integer)
    p:option("--temperature", "Sampling temperature."):convert(tonumber)
    p:option("--max-tokens", "The reply's token limit."):convert(cli.positive_integer)
    p:option("--timeout", "Seconds one request may take.", "300"):convert(tonumber)
    p:option("--retries", "Retries of a request that failed in a way a retry can fix.", "5"):convert(cli.nonnegative_integer)
    p:option("--format", "The prompt's variant: lua (kreach's candidates) or python (KernelBench's ModelNew)."):choices({ "lua", "python" })
    p:option("--dtype", "The problems' dtype.", "f32"):choices({ "f32", "bf16", "f16" })
    p:flag("--refresh", "Ask again, even where the database holds the reply.")
    p:flag("--json", "Print one JSON object.")
  end,
  run = function(args)
    if not args.model then errors.usage("--model is required: a configuration (experiments/models/NAME.lua) or a model id") end
    if not (args.timeout and args.timeout > 0) then errors.usage("--timeout: a positive number of seconds") end
    local cfg = models.load(args.model)
    local provider = args.provider or cfg.provider or "openai"
    local base = args.base_url or cfg.base_url or providers.DEFAULT_BASE[provider]
    local format = args.format or cfg.format or "lua"
    local key_env = args.api_key_env or cfg.api_key_env or models.KEY_ENV[provider]
    local key
    if key_env ~= "none" then
      key = os.getenv(key_env)
      if not key or key == "" then
        errors.usage(("the API key: $%s is not set (--api-key-env names another variable; 'none' for a server without a key)"):format(key_env))
      end
    end
    local secrets = { key }
    local temperature = args.temperature or cfg.temperature
    local max_tokens = args.max_tokens or cfg.max_tokens
    local model_name = cfg.name

    -- the problems
    local insts = {}
    local suites = {}
    for _, s in ipairs(problem.suites()) do suites[s] = true end
    for _, t in ipairs(args.targets) do
      local files = {}
      if suites[t] then files = problem.load_suite(t).files else files = { problem.resolve(t) } end
      for _, f in ipairs(files) do
        local p = problem.load(f)
        local inst = p:instantiate{ dtype = args.dtype }
        inst:validate()
        insts[#insts + 1] = inst
      end
    end
    local device
    if kcore.has_device() then device = kcore.device() end

    -- the configuration's hash: what changes a reply
    local conf = { provider = provider, base = base, model = cfg.model, temperature = temperature, max_tokens = max_tokens,
                   top_p = cfg.top_p, extra = cfg.extra, format = format }
    local config_hash = util.hash(json.encode(conf))
    local db_path = args.db
    local db = store.open(db_path)
    mkdir_p(args.out)

    -- every (problem, sample): cached, or to ask
    local jobs, asks = {}, {}
    for _, inst in ipairs(insts) do
      local pr = prompt_mod.build(inst, { format = format, device = device })
      for s = 1, args.samples do
        local k = util.hash(table.concat({ config_hash, pr.system, pr.user, tostring(s), "1" }, "\0"))
        local job = { inst = inst, prompt = pr, sample = s, turn = 1, key = k }
        job.file = ("%03d_%s_s%d_t1.%s"):format(inst.problem.id or 0, model_name, s, format == "lua" and "lua" or "py")
        local cached = not args.refresh and db:find_generation(k)
        if cached then job.row = cached; job.cached = true else asks[#asks + 1] = job end
        jobs[#jobs + 1] = job
      end
    end

    local function request_of(job)
      return providers.request(provider, { base = base, model = cfg.model, key = key, system = job.prompt.system,
        prompt = job.prompt.user, temperature = temperature, max_tokens = max_tokens, top_p = cfg.top_p, extra = cfg.extra })
    end
    local function record(job, res)
      local _, rec = request_of(job)
      local reply = providers.parse(provider, res, secrets)
      local row = { key = job.key, model = model_name, provider = provider, config_hash = config_hash,
                    suite = job.inst.problem.suite, problem_id = job.inst.problem.id, problem_name = job.inst.problem.name,
                    sample = job.sample, turn = job.turn, format = format,
                    prompt = job.prompt.system .. "\n\n" .. job.prompt.user, request = rec,
                    response = http.redact(res.body or "", secrets), latency_s = res.latency_s,
                    retries = res.retries, attempts = #res.attempts }
      if not reply.ok then
        row.status, row.error = "error", reply.message
      else
        row.reply, row.finish, row.request_id = http.redact(reply.text, secrets), reply.finish, reply.request_id
        row.input_tokens, row.output_tokens = reply.input_tokens, reply.output_tokens
        if cfg.price_in and cfg.price_out and reply.input_tokens and reply.output_tokens then
          row.cost_usd = (reply.input_tokens * cfg.price_in + reply.output_tokens * cfg.price_out) / 1e6
        end
        local c, why, detail = extract.candidate(reply.text, format)
        if c then
          row.status, row.candidate_file, row.candidate_hash = "ok", job.file, util.hash(c.code)
          job.code = c.code
        else
          row.status, row.error = why, detail
        end
      end
      db:save_generation(row)
      job.row = db:find_generation(job.key)
      return reply
    end

    local made = 0
    local stopped
    local function progress(job)
      local r = job.row
      io.stderr:write(("kreach generate: %s sample %d: %s%s%s\n"):format(job.inst.problem.name, job.sample, r.status,
        (r.finish == "length" or r.finish == "max_tokens") and " (truncated)" or "",
        r.error and (": " .. tostring(r.error):sub(1, 200)) or ""))
    end
    if #asks > 0 then
      local hopts = { concurrency = args.concurrency, retries = args.retries, timeout_s = args.timeout }
      -- the first request alone: a bad key or a bad request stops the run before the others go
      local first = table.remove(asks, 1)
      local res = http.run({ (request_of(first)) }, hopts)
      made = made + 1
      local reply = record(first, res[1])
      progress(first)
      if not reply.ok and (reply.status == 400 or reply.status == 401 or reply.status == 403 or reply.status == 404) then
        stopped = reply.message
      elseif #asks > 0 then
        local reqs = {}
        for i, job in ipairs(asks) do reqs[i] = (request_of(job)) end
        local results = http.run(reqs, hopts)
        made = made + #asks
        for i, job in ipairs(asks) do
          record(job, results[i])
          progress(job)
        end
      end
    end

    -- the candidates' files, and the manifest (the entries of other files kept)
    local manifest_path = args.out .. "/manifest.json"
    local entries, by_file = {}, {}
    local f = io.open(manifest_path, "r")
    if f then
      local ok, old = pcall(json.decode, f:read("a"))
      f:close()
      if ok and type(old) == "table" then
        for _, e in ipairs(old) do if type(e) == "table" and e.file then entries[#entries + 1] = e; by_file[e.file] = #entries end end
      end
    end
    for _, job in ipairs(jobs) do
      local r = job.row
      if r and r.status == "ok" then
        if not job.code then
          local c = extract.candidate(r.reply or "", format)
          job.code = c and c.code
        end
        if job.code then
          write(args.out .. "/" .. job.file, job.code)
          local e = { file = job.file, problem = job.inst.problem.id,
                      origin = { model = model_name, sample = job.sample, turn = job.turn, request_id = r.request_id } }
          if by_file[job.file] then entries[by_file[job.file]] = e else entries[#entries + 1] = e; by_file[job.file] = #entries end
        end
      end
    end
    write(manifest_path, json.encode(json.array(entries)) .. "\n")

    -- the summary: this run's jobs, with correctness where kreach eval has judged the candidates
    local verdicts = {}
    for _, e in ipairs(db:evaluations{}) do
      if e.candidate_hash and e.verdict then
        verdicts[e.candidate_hash] = verdicts[e.candidate_hash] or e.verdict
        if e.verdict == "correct" then verdicts[e.candidate_hash] = "correct" end
      end
    end
    db:close()
    local sum = { model = model_name, provider = provider, requests = made, cached = #jobs - made, jobs = #jobs,
                  input_tokens = 0, output_tokens = 0, cost_usd = 0, retries = 0, candidates = 0, no_code = 0,
                  no_candidate = 0, errors = 0, truncated = 0, judged = 0, correct = 0 }
    local per_problem = {}
    local latencies = {}
    for _, job in ipairs(jobs) do
      local r = job.row or {}
      sum.input_tokens = sum.input_tokens + (r.input_tokens or 0)
      sum.output_tokens = sum.output_tokens + (r.output_tokens or 0)
      sum.cost_usd = sum.cost_usd + (r.cost_usd or 0)
      sum.retries = sum.retries + (r.retries or 0)
      if r.latency_s then latencies[#latencies + 1] = r.latency_s end
      if r.status == "ok" then sum.candidates = sum.candidates + 1
      elseif r.status == "no_code" then sum.no_code = sum.no_code + 1
      elseif r.status == "no_candidate" then sum.no_candidate = sum.no_candidate + 1
      else sum.errors = sum.errors + 1 end
      if r.finish == "length" or r.finish == "max_tokens" then sum.truncated = sum.truncated + 1 end
      local pp = per_problem[job.inst.problem.name] or { n = 0, c = 0, judged = 0 }
      per_problem[job.inst.problem.name] = pp
      pp.n = pp.n + 1
      local v = r.candidate_hash and verdicts[r.candidate_hash]
      -- a reply without a candidate counts as incorrect, as KernelBench counts a failed generation
      if v or r.status ~= "ok" then pp.judged = pp.judged + 1; sum.judged = sum.judged + 1 end
      if v == "correct" then pp.c = pp.c + 1; sum.correct = sum.correct + 1 end
    end
    table.sort(latencies)
    sum.latency_median_s = #latencies > 0 and latencies[(#latencies + 1) // 2] or nil
    local all_judged = sum.judged == sum.jobs
    if all_judged and sum.jobs > 0 then
      sum.correct_rate = sum.correct / sum.jobs
      sum.pass_at = {}
      for k = 1, args.samples do
        local tot, n = 0, 0
        for _, pp in pairs(per_problem) do tot = tot + pass_at_k(pp.n, pp.c, k); n = n + 1 end
        sum.pass_at[k] = tot / n
      end
    end

    if args.json then
      local rows = {}
      for _, job in ipairs(jobs) do
        local r = job.row or {}
        rows[#rows + 1] = { problem = job.inst.problem.name, sample = job.sample, turn = job.turn, status = r.status,
                            error = r.error, finish = r.finish, file = r.candidate_file, cached = job.cached or false,
                            input_tokens = r.input_tokens, output_tokens = r.output_tokens, cost_usd = r.cost_usd,
                            latency_s = r.latency_s, retries = r.retries }
      end
      io.write(json.encode({ db = db_path, out = args.out, summary = sum, generations = json.array(rows), stopped = stopped }), "\n")
    else
      io.write(("%s (%s): %d requests made, %d answered from %s; %d input and %d output tokens%s; %d retries%s\n"):format(
        model_name, provider, sum.requests, sum.cached, db_path, sum.input_tokens, sum.output_tokens,
        (cfg.price_in and cfg.price_out) and (", $%.4f"):format(sum.cost_usd) or " (no prices configured)", sum.retries,
        sum.latency_median_s and (", median latency %.2f s"):format(sum.latency_median_s) or ""))
      io.write(("candidates: %d of %d replies (no code %d, no loadable candidate %d, failed requests %d, truncated %d), in %s with manifest.json\n"):format(
        sum.candidates, sum.jobs, sum.no_code, sum.no_candidate, sum.errors, sum.truncated, args.out))
      if sum.correct_rate then
        local pk = {}
        for k, v in ipairs(sum.pass_at) do pk[#pk + 1] = ("pass@%d %.3f"):format(k, v) end
        io.write(("correct: %d of %d (%.1f%%); %s\n"):format(sum.correct, sum.jobs, 100 * sum.correct_rate, table.concat(pk, ", ")))
      else
        io.write(("correct: not yet judged (%d of %d); kreach eval <suite> %s --db %s, then this command again (no request is repeated)\n"):format(
          sum.judged, sum.jobs, args.out, db_path))
      end
    end
    if stopped then
      io.stderr:write("kreach generate: stopped at the first request: ", stopped, "\n")
      return 1
    end
    return 0
  end,
}
