-- kreach generate <suite|problem...> --model NAME: asks a language model for candidates (issue 19;
-- --eval is not yet run on a GPU). For each problem and sample it builds the prompt from
-- the problem alone (kreach.generate.prompt), asks through the provider's API (kreach.http:
-- requests in flight up to --concurrency, retries with backoff), takes the candidate from the
-- reply (kreach.generate.extract), writes it to --out DIR with a manifest.json that `kreach eval`
-- reads, and stores every request and reply in the results database, keyed so that a second
-- identical run makes no request. The API key is read from the environment only and written
-- nowhere. Exit 1 when a request got no reply after its retries (what came is kept) or the
-- first one was refused (400, 401, 403, 404). docs/generate.md.
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local kinds = require "kreach.kinds"
local problem = require "kreach.problem"
local store = require "kreach.results.store"
local util = require "kreach.core.util"
local kdevice = require "kreach.device"
local http = require "kreach.http"
local providers = require "kreach.generate.providers"
local extract = require "kreach.generate.extract"
local prompt_mod = require "kreach.generate.prompt"
local models = require "kreach.generate.models"
local output = require "kreach.atomic"
local ev = require "kreach.run.evaluate"
local seal = require "kreach.run.seal"
local evaluation = require "kreach.results.evaluation"
local text = require "kreach.text"
local kcore = require "kreach.core"
local progress_mod = require "kreach.generate.progress"

-- writes a file whole or not at all (kreach.atomic), never over the results database
local function write(path, text, db_path)
  local out, err, status = output.open(path, { protect = output.database_files(db_path) })
  if not out then errors.raise(status, ("cannot write %s: %s"):format(path, tostring(err))) end
  out:write(text)
  local ok, cerr = out:commit()
  if not ok then errors.failed("cannot write %s: %s", path, tostring(cerr)) end
end

-- eval_hint(args, db_path) -> the kreach eval command(s) that judge generate's output: eval takes
-- one suite or problem, so with several targets, one command for each
local function eval_hint(args, db_path)
  local q = text.shell_quote
  local t = args.targets
  local first = ("kreach eval %s %s --db %s"):format(q(t[1]), q(args.out), q(db_path))
  if #t == 1 then return first end
  local rest = {}
  for i = 2, #t do rest[#rest + 1] = q(t[i]) end
  return ("%s (then the same for %s)"):format(first, table.concat(rest, ", "))
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
    p:option("--model", "A model configuration (NAME: experiments/models/NAME.lua of kreach's tree, or a .lua file), or a model id with --provider.")
    p:option("--provider", "openai (Chat Completions, and vLLM, SGLang, llama.cpp, Ollama) or anthropic (Messages).")
      :choices({ "openai", "anthropic" })
    p:option("--base-url", "The API's base URL (default: the provider's).")
    p:option("--api-key-env", "The environment variable holding the API key ('none': a server without one).")
    p:option("--samples", "Samples per problem.", "1"):convert(cli.positive_integer)
    p:option("--turns", "Turns per sample: after each, the candidate's verdict goes back and a fix or a faster version is asked for.", "1")
      :convert(cli.positive_integer)
    p:flag("--eval", "Evaluate each turn's candidates here as kreach eval does (needs a GPU).")
    p:flag("--no-torch", "With --eval: do not time PyTorch beside kreach (kreach eval's --no-torch; by default it is, where a python3 with CUDA PyTorch is found).")
    p:option("--out", "The directory the candidates and manifest.json go into.", "generated"):argname("<dir>")
    cli.db_option(p)
    p:option("--concurrency", "Requests in flight at once.", "4"):convert(cli.positive_integer)
    p:option("--temperature", "Sampling temperature."):convert(tonumber)
    p:option("--max-tokens", "The reply's token limit."):convert(cli.positive_integer)
    p:option("--request-timeout --timeout", "Seconds one HTTP request may take (--timeout is the old spelling).", "300")
      :convert(tonumber):target("timeout"):argname("<seconds>")
    p:option("--retries", "Retries of a request that failed in a way a retry can fix.", "5"):convert(cli.nonnegative_integer)
    p:option("--format", "The prompt's variant: lua (kreach's candidates) or python (KernelBench's ModelNew)."):choices(kinds.CANDIDATE_KINDS)
    p:option("--dtype", "The problems' dtype.", kinds.DTYPES[1]):choices(kinds.DTYPES)
    p:flag("--refresh", "Ask again, even where the database holds the reply.")
    p:flag("--json", "Print one JSON object.")
    p:flag("--quiet", "Show no progress on stderr (requests done and in flight, retries, the ETA).")
  end,
  run = function(args)
    if not args.model then errors.usage("--model is required: a configuration (experiments/models/NAME.lua) or a model id with --provider") end
    if not (args.timeout and args.timeout > 0 and args.timeout < math.huge) then errors.usage("--request-timeout: a positive number of seconds") end
    if args.temperature and not (args.temperature >= 0 and args.temperature < math.huge) then
      errors.usage("--temperature: a finite number >= 0")
    end
    if args.no_torch and not args.eval then errors.usage("--no-torch goes with --eval (it changes how the candidates are evaluated here)") end
    local cfg = models.load(args.model, args.provider)
    local provider = args.provider or cfg.provider or "openai"
    if args.base_url then
      local ok, why = providers.check_base_url(args.base_url)
      if not ok then errors.usage(("--base-url '%s': %s"):format(text.clean(args.base_url, 200), why)) end
    end
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
    -- the prompt's device facts: a GPU's only (the host device's are the emulation's). --eval
    -- needs a GPU: refused now, before any request is paid for
    if args.eval then kdevice.require("kreach generate --eval") end
    local device = kdevice.cuda()

    -- the configuration's hash: what changes a reply
    local conf = { provider = provider, base = base, model = cfg.model, temperature = temperature, max_tokens = max_tokens,
                   top_p = cfg.top_p, extra = cfg.extra, format = format }
    local config_hash = util.hash(json.encode(conf))
    local db_path = args.db
    local db = store.open(db_path)
    local mok, merr = output.mkdirs(args.out)
    if not mok then errors.file(args.out, "cannot create the directory: " .. tostring(merr)) end

    -- the conversations, one a (problem, sample); each turn of one is a job
    local ext = format == "lua" and "lua" or "py"
    local convs = {}
    for _, inst in ipairs(insts) do
      local pr = prompt_mod.build(inst, { format = format, device = device })
      for s = 1, args.samples do
        convs[#convs + 1] = { inst = inst, prompt = pr, sample = s, active = true,
                              messages = { { role = "user", content = pr.user } } }
      end
    end

    -- the job's HTTP request; its record (what may be stored: no key) kept on the job
    local function request_of(job)
      local req, rec = providers.request(provider, { base = base, model = cfg.model, key = key, system = job.conv.prompt.system,
        messages = job.messages, temperature = temperature, max_tokens = max_tokens, top_p = cfg.top_p, extra = cfg.extra })
      job.record = rec
      return req
    end
    local function record(job, res)
      local rec = job.record
      local reply = providers.parse(provider, res, secrets)
      local row = { key = job.key, model = model_name, provider = provider, config_hash = config_hash,
                    suite = job.inst.problem.suite, problem_id = job.inst.problem.id, problem_name = job.inst.problem.name,
                    sample = job.sample, turn = job.turn, format = format,
                    prompt = job.conv.prompt.system .. "\n\n" .. job.messages[#job.messages].content, request = rec,
                    response = http.redact(res.body or "", secrets), latency_s = res.latency_s,
                    retries = res.retries, attempts = #res.attempts }
      if not reply.ok then
        row.status, row.error = "error", text.clean(reply.message)
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
          row.status, row.error = why, text.clean(detail)
        end
      end
      db:save_generation(row)
      job.row = db:find_generation(job.key)
      return reply
    end

    -- the progress on stderr (kreach.generate.progress), one tracker for each turn's requests,
    -- off with --quiet; stdout keeps only the summary (one JSON document with --json)
    local tracker
    local function label(job)
      return ("%s sample %d turn %d"):format(job.inst.problem.name, job.sample, job.turn)
    end
    -- hooks(o, job_of) -> o with kreach.http's hooks feeding the tracker (job_of(i): request i's job)
    local function hooks(o, job_of)
      o.on_start = function(i) tracker:start(job_of(i)) end
      o.on_retry = function(i, att, wait_s, retry)
        local job = job_of(i)
        tracker:retry(job, label(job), wait_s, progress_mod.reason(att), retry)
      end
      o.on_tick = function() tracker:tick() end
      return o
    end
    -- a line for each reply (a failed request's even with --quiet)
    local function progress(job)
      local r = job.row
      local l = ("kreach generate: %s: %s%s%s"):format(label(job), r.status,
        (r.finish == "length" or r.finish == "max_tokens") and " (truncated)" or "",
        r.error and (": " .. text.clean(r.error, 200)) or "")
      if args.quiet and r.status == "error" then io.stderr:write(l, "\n") else tracker:line(l) end
    end

    -- the manifest: the entries of other files kept
    local manifest_path = args.out .. "/manifest.json"
    local entries, by_file = {}, {}
    do
      -- an existing manifest's entries are kept; one that does not read is the user's to fix,
      -- not to be overwritten
      local f = io.open(manifest_path, "r")
      if f then
        local body = f:read("a")
        f:close()
        local ok, old = pcall(json.decode, body)
        if not ok or type(old) ~= "table" then
          errors.file(manifest_path, "not a manifest (a JSON array of {file, problem, origin}): " .. text.clean(tostring(old), 200))
        end
        for i, e in ipairs(old) do
          if type(e) ~= "table" or type(e.file) ~= "string" then
            errors.file(manifest_path, ("entry %d has no file name"):format(i))
          end
          entries[#entries + 1] = e
          by_file[e.file] = #entries
        end
      end
    end

    -- the verdicts kreach eval stored, by candidate hash (a correct one wins over the others)
    local function verdicts()
      local v = {}
      for _, e in ipairs(db:evaluations{}) do
        if e.candidate_hash and e.verdict and (not v[e.candidate_hash] or e.verdict == "correct") then v[e.candidate_hash] = e end
      end
      return v
    end
    -- evaluates the jobs' candidates that have no verdict yet (--eval: a GPU), per problem
    local function evaluate(jobs)
      local by_problem, order = {}, {}
      local have = verdicts()
      for _, job in ipairs(jobs) do
        local r = job.row
        if r and r.status == "ok" and not have[r.candidate_hash] then
          local path = job.inst.problem.path
          if not by_problem[path] then by_problem[path] = {}; order[#order + 1] = path end
          table.insert(by_problem[path], args.out .. "/" .. r.candidate_file)
        end
      end
      if #order == 0 then return end
      if not args.eval then
        errors.usage(("--turns %d sends each turn's verdicts back: add --eval to judge the candidates here (a GPU), or judge them first with %s"):format(
          args.turns, eval_hint(args, db_path)))
      end
      local sok, serr = seal.check_available("generate")
      if not sok then errors.raise(errors.STATUS.load, serr, "seal") end
      db:close()
      for _, path in ipairs(order) do
        -- kreach eval's defaults (PyTorch timed beside, unless --no-torch): the same evaluation
        -- key, so that kreach eval and generate --eval reuse each other's evaluations
        ev.run{ target = path, candidates = by_problem[path], dtype = args.dtype, sizes = {}, policy = {}, db = db_path, timeout_s = 60,
                torch = { enabled = not args.no_torch, compile = false, cudnn_tf32 = false },
                tty = false, command = { "kreach", "generate", "--eval" },
                log = function(l) io.stderr:write("kreach generate: eval: ", l, "\n") end }
      end
      db = store.open(db_path)
    end

    local made, stopped = 0, nil
    local hopts = { concurrency = args.concurrency, retries = args.retries, timeout_s = args.timeout }
    local jobs = {}
    for turn = 1, args.turns do
      local tjobs, asks = {}, {}
      for _, cv in ipairs(convs) do
        if cv.active then
          local msgs = {}
          for i, m in ipairs(cv.messages) do msgs[i] = m end
          local k = util.hash(table.concat({ config_hash, cv.prompt.system, json.encode(msgs), tostring(cv.sample), tostring(turn) }, "\0"))
          local job = { conv = cv, inst = cv.inst, sample = cv.sample, turn = turn, key = k, messages = msgs,
                        file = ("%03d_%s_s%d_t%d.%s"):format(cv.inst.problem.id or 0, model_name, cv.sample, turn, ext) }
          -- a stored reply answers again; a stored failure (the request never got one) is asked again
          local cached = not args.refresh and db:find_generation(k)
          if cached and cached.status ~= "error" then job.row = cached; job.cached = true else asks[#asks + 1] = job end
          tjobs[#tjobs + 1] = job
          jobs[#jobs + 1] = job
          cv.jobs = cv.jobs or {}
          cv.jobs[#cv.jobs + 1] = job
        end
      end
      if #tjobs == 0 then break end
      tracker = progress_mod.new{ total = #asks, concurrency = args.concurrency, retries = args.retries, tty = util.isatty(2),
                                  now = kcore.now, quiet = args.quiet }
      if #asks > 0 and made == 0 then
        -- the run's first request alone: a bad key or a bad request stops it before the others go
        local first = table.remove(asks, 1)
        local o = {}
        for k, v in pairs(hopts) do o[k] = v end
        local res = http.run({ request_of(first) }, hooks(o, function() return first end))
        made = made + 1
        local reply = record(first, res[1])
        progress(first)
        tracker:finished(first, res[1].latency_s)
        if not reply.ok and (reply.status == 400 or reply.status == 401 or reply.status == 403 or reply.status == 404) then
          stopped = text.clean(reply.message, 2000)
          tracker:close()
          break
        end
      end
      if #asks > 0 then
        local reqs = {}
        for i, job in ipairs(asks) do reqs[i] = request_of(job) end
        -- each reply is stored as it arrives: a killed run resumes with what came
        local o = {}
        for k, v in pairs(hopts) do o[k] = v end
        hooks(o, function(i) return asks[i] end)
        o.on_done = function(i, res)
          made = made + 1
          record(asks[i], res)
          progress(asks[i])
          tracker:finished(asks[i], res.latency_s)
        end
        http.run(reqs, o)
      end
      tracker:close()
      -- the turn's candidates' files and manifest entries
      for _, job in ipairs(tjobs) do
        local r = job.row
        if r and r.status == "ok" then
          if not job.code then
            local c = extract.candidate(r.reply or "", format)
            job.code = c and c.code
          end
          if job.code then
            write(args.out .. "/" .. job.file, job.code, db_path)
            local e = { file = job.file, problem = job.inst.problem.id,
                        origin = { model = model_name, sample = job.sample, turn = job.turn, request_id = r.request_id } }
            if by_file[job.file] then entries[by_file[job.file]] = e else entries[#entries + 1] = e; by_file[job.file] = #entries end
          end
        end
      end
      write(manifest_path, json.encode(json.array(entries)) .. "\n", db_path)
      -- judged (where a next turn needs it, or --eval asks), then the next turn's message
      if turn < args.turns or args.eval then evaluate(tjobs) end
      if turn < args.turns then
        local have = verdicts()
        for _, job in ipairs(tjobs) do
          local r, cv = job.row, job.conv
          if r.status == "error" then
            cv.active = false -- a failed request ends the conversation
          else
            local e = r.candidate_hash and have[r.candidate_hash]
            local fb
            if r.status ~= "ok" then
              fb = { verdict = "invalid_candidate", reason = r.status, detail = r.error }
            elseif e then
              fb = { verdict = e.verdict, reason = e.reason, detail = e.detail, speedup = e.speedup, sol_fraction = e.sol_fraction }
              if e.verdict == "compile_error" then fb.log, fb.detail = e.detail, nil end
            end
            cv.messages = {}
            for i, m in ipairs(job.messages) do cv.messages[i] = m end
            cv.messages[#cv.messages + 1] = { role = "assistant", content = r.reply or "" }
            cv.messages[#cv.messages + 1] = { role = "user", content = prompt_mod.feedback(fb) }
          end
        end
      end
    end

    -- the summary: this run's requests (every turn), and correctness where kreach eval has
    -- judged the candidates: a (problem, sample) is correct when a candidate of any of its turns
    -- is; a reply without a candidate counts as incorrect, as KernelBench counts a failed
    -- generation
    local have = verdicts()
    db:close()
    local sum = { model = model_name, provider = provider, requests = made, cached = #jobs - made, jobs = #jobs,
                  samples = #convs, turns = args.turns, input_tokens = 0, output_tokens = 0, cost_usd = 0, retries = 0,
                  candidates = 0, no_code = 0, no_candidate = 0, errors = 0, not_asked = 0, truncated = 0, judged = 0,
                  correct = 0, failed_samples = 0 }
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
      elseif r.status == "error" then sum.errors = sum.errors + 1; job.conv.failed = true
      else sum.not_asked = sum.not_asked + 1 end -- the run stopped before asking it
      if r.finish == "length" or r.finish == "max_tokens" then sum.truncated = sum.truncated + 1 end
      local cv = job.conv
      cv.unjudged = cv.unjudged or 0
      local e = r.candidate_hash and have[r.candidate_hash]
      if r.status == "ok" and not e then cv.unjudged = cv.unjudged + 1 end
      if e and e.verdict == "correct" then cv.correct = true end
    end
    local per_problem = {}
    for _, cv in ipairs(convs) do
      local pp = per_problem[cv.inst.problem.name] or { n = 0, c = 0 }
      per_problem[cv.inst.problem.name] = pp
      pp.n = pp.n + 1
      -- a sample whose request failed has no verdict: it is neither judged nor incorrect
      if cv.failed then sum.failed_samples = sum.failed_samples + 1
      elseif (cv.unjudged or 0) == 0 then sum.judged = sum.judged + 1 end
      if cv.correct then pp.c = pp.c + 1; sum.correct = sum.correct + 1 end
    end
    sum.latency_median_s = progress_mod.median(latencies)
    -- kreach eval's figures over the samples, once all are judged: each sample's best
    -- evaluation over its turns (a correct one, the fastest), a sample without a candidate as
    -- an invalid one
    local eval_rows = {}
    if sum.judged == #convs then
      for _, cv in ipairs(convs) do
        local best
        for _, job in ipairs(cv.jobs or {}) do
          local e = job.row and job.row.candidate_hash and have[job.row.candidate_hash]
          if e then
            if not best or (e.verdict == "correct" and (best.verdict ~= "correct" or (e.speedup or 0) > (best.speedup or 0))) then
              best = e
            end
          end
        end
        eval_rows[#eval_rows + 1] = best or { verdict = "invalid_candidate" }
      end
      sum.evaluation = evaluation.summary(eval_rows)
    end
    if sum.judged == #convs and #convs > 0 and not stopped then
      sum.correct_rate = sum.correct / #convs
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
      io.write(("%s (%s): %d request%s made, %d answered from %s; %d input and %d output tokens%s; %d retr%s%s\n"):format(
        model_name, provider, sum.requests, sum.requests == 1 and "" or "s", sum.cached, db_path, sum.input_tokens, sum.output_tokens,
        (cfg.price_in and cfg.price_out) and (", $%.4f"):format(sum.cost_usd) or " (no prices configured)", sum.retries,
        sum.retries == 1 and "y" or "ies",
        sum.latency_median_s and (", median latency %.2f s"):format(sum.latency_median_s) or ""))
      io.write(("candidates: %d of %d replies (no code %d, no loadable candidate %d, failed requests %d, truncated %d), in %s with manifest.json\n"):format(
        sum.candidates, sum.jobs, sum.no_code, sum.no_candidate, sum.errors, sum.truncated, args.out))
      if sum.correct_rate then
        local pk = {}
        for k, v in ipairs(sum.pass_at) do pk[#pk + 1] = ("pass@%d %.3f"):format(k, v) end
        io.write(("correct: %d of %d samples (%.1f%%)%s; %s\n"):format(sum.correct, sum.samples, 100 * sum.correct_rate,
          args.turns > 1 and (" within %d turns"):format(args.turns) or "", table.concat(pk, ", ")))
        if sum.evaluation then
          io.write("kreach eval's figures over the samples (each its best turn):\n")
          for l in evaluation.summary_text(sum.evaluation):gmatch("[^\n]+") do io.write("  ", l, "\n") end
        end
      elseif sum.failed_samples > 0 then
        io.write(("correct: not given: %d of %d samples have a request that failed (the same command again asks only those)\n"):format(
          sum.failed_samples, sum.samples))
      else
        -- some samples are judged (those without a candidate count as incorrect), not all
        io.write(("correct: not given: %d of %d samples judged; %s judges the others, then run this command again (no request is repeated)\n"):format(
          sum.judged, sum.samples, eval_hint(args, db_path)))
      end
    end
    if stopped then
      io.stderr:write("kreach generate: stopped at the first request: ", stopped, "\n")
      return 1
    end
    -- a request that got no reply after its retries fails the run: the replies that came are
    -- stored and their candidates written, and the same command asks only what failed
    if sum.errors > 0 then
      io.stderr:write(("kreach generate: %d of %d requests failed after their retries (transport errors, timeouts, HTTP errors, replies that were not the API's); the replies that came are stored and their candidates written: run the same command again to ask only the failed ones\n"):format(
        sum.errors, sum.requests))
      return 1
    end
    return 0
  end,
}
