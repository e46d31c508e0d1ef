-- kreach.generate.session: the work of `kreach generate` (issue 19), for the command to call once.
-- For each problem and sample it builds the prompt from the problem alone (kreach.generate.prompt),
-- asks through the provider's API (kreach.http: requests in flight up to --concurrency, retries
-- with backoff, the progress on stderr through kreach.generate.progress), takes the candidate
-- from the reply (kreach.generate.extract), writes it with manifest.json (kreach.generate.manifest),
-- and stores every request and reply in the results database (its generations table), keyed so
-- that a second identical run makes no request, on this machine or another, with a GPU or
-- without (M.job_key: the model, the sampling, the prompt without the device's facts, the
-- sample and the turn). With --turns, each turn's candidates are judged
-- (--eval: kreach.run.evaluate, as kreach eval does) and their verdicts go back to the model.
-- The API key is read from the environment only and written nowhere, and needed only when a
-- request must be sent: a run the database answers whole needs none.
local lfs = require "lfs"
local errors = require "kreach.errors"
local json = require "kreach.json"
local problem = require "kreach.problem"
local store = require "kreach.results.store"
local util = require "kreach.core.util"
local kcore = require "kreach.core"
local kdevice = require "kreach.device"
local http = require "kreach.http"
local text = require "kreach.text"
local output = require "kreach.atomic"
local providers = require "kreach.generate.providers"
local extract = require "kreach.generate.extract"
local prompt_mod = require "kreach.generate.prompt"
local models = require "kreach.generate.models"
local progress = require "kreach.progress"
local progress_mod = require "kreach.generate.progress"
local manifest = require "kreach.generate.manifest"
local ev = require "kreach.run.evaluate"
local builds = require "kreach.run.builds"
local plan = require "kreach.run.plan"
local seal = require "kreach.run.seal"

local M = {}

-- eval_hint(targets, out, db_path) -> the kreach eval command(s) that judge generate's output:
-- eval takes one suite or problem, so with several targets, one command for each
function M.eval_hint(targets, out, db_path)
  local q = text.shell_quote
  local first = ("kreach eval %s %s --db %s"):format(q(targets[1]), q(out), q(db_path))
  if #targets == 1 then return first end
  local rest = {}
  for i = 2, #targets do rest[#rest + 1] = q(targets[i]) end
  return ("%s (then the same for %s)"):format(first, table.concat(rest, ", "))
end

-- configure(args) -> the model's settings: its configuration (kreach.generate.models), provider,
-- base URL, prompt format, API key (from the environment: nil where its variable is unset, which
-- is a usage error only once a request must be sent: M.need_key) and sampling options, the
-- configuration's hash (config_hash, stored with each row) and the part of it that a cache key is
-- made of (key_hash); a bad --base-url is a usage error
function M.configure(args)
  local cfg = models.load(args.model, args.provider)
  local provider = args.provider or cfg.provider or "openai"
  if args.base_url then
    local ok, why = providers.check_base_url(args.base_url)
    if not ok then errors.usage(("--base-url '%s': %s"):format(text.clean(args.base_url, 200), why)) end
  end
  local s = { cfg = cfg, provider = provider, model_name = cfg.name,
              base = args.base_url or cfg.base_url or providers.DEFAULT_BASE[provider],
              format = args.format or cfg.format or "lua",
              temperature = args.temperature or cfg.temperature, max_tokens = args.max_tokens or cfg.max_tokens }
  s.key_env = args.api_key_env or cfg.api_key_env or models.KEY_ENV[provider]
  if s.key_env ~= "none" then
    s.key = os.getenv(s.key_env)
    if s.key == "" then s.key = nil end
  end
  s.secrets = { s.key }
  -- what changes a reply: the model and the sampling, not where it is asked (the base URL is
  -- in config_hash, stored with the row, not in the key: a mirror or another port of the same
  -- server answers from the database)
  local conf = { provider = provider, model = cfg.model, temperature = s.temperature,
                 max_tokens = s.max_tokens, top_p = cfg.top_p, extra = cfg.extra, format = s.format }
  s.key_hash = util.hash(json.encode(conf))
  conf.base = s.base
  s.config_hash = util.hash(json.encode(conf))
  return s
end

-- need_key(s): a usage error unless the API key is at hand (or the server takes none); called
-- once a request must really be sent, so that a run answered from the database needs no key
function M.need_key(s)
  if s.key_env ~= "none" and not s.key then
    errors.usage(("the API key: $%s is not set (--api-key-env names another variable; 'none' for a server without a key)"):format(s.key_env))
  end
end

-- job_key(s, prompt, messages, sample, turn) -> the cache key of a request (the generations
-- table's `key`): the model's settings (key_hash: provider, model, sampling, extra fields,
-- format), the system prompt, the conversation with the first message in its portable form
-- (the prompt without the device's facts, kreach.generate.prompt's `portable`), the sample and
-- the turn. Nothing of the machine: a rerun elsewhere, or without a GPU, finds the reply.
-- ("v2": keys made before, over the whole prompt and the base URL, simply miss.)
function M.job_key(s, pr, messages, sample, turn)
  local msgs = {}
  for i, m in ipairs(messages) do msgs[i] = m end
  if msgs[1] and msgs[1].content == pr.user then msgs[1] = { role = msgs[1].role, content = pr.portable } end
  return util.hash(table.concat({ "v2", s.key_hash, pr.system, json.encode(msgs), tostring(sample), tostring(turn) }, "\0"))
end

-- problems(targets, dtype) -> the problems' instances: a suite's every file, or one problem each
function M.problems(targets, dtype)
  local insts = {}
  local suites = {}
  for _, s in ipairs(problem.suites()) do suites[s] = true end
  for _, t in ipairs(targets) do
    local files = {}
    if suites[t] then files = problem.load_suite(t).files else files = { problem.resolve(t) } end
    for _, f in ipairs(files) do
      local p = problem.load(f)
      local inst = p:instantiate{ dtype = dtype }
      inst:validate()
      insts[#insts + 1] = inst
    end
  end
  return insts
end

local Session = {}
Session.__index = Session

-- the job's HTTP request; its record (what may be stored: no key) kept on the job
function Session:request_of(job)
  local s, cfg = self.s, self.s.cfg
  local req, rec = providers.request(s.provider, { base = s.base, model = cfg.model, key = s.key, system = job.conv.prompt.system,
    messages = job.messages, temperature = s.temperature, max_tokens = s.max_tokens, top_p = cfg.top_p, extra = cfg.extra })
  job.record = rec
  return req
end

-- record(job, res) -> the provider's parsed reply; the request and its outcome stored (the
-- generations table), the stored row kept on the job, the candidate's code too
function Session:record(job, res)
  local s, cfg = self.s, self.s.cfg
  local reply = providers.parse(s.provider, res, s.secrets)
  local row = { key = job.key, model = s.model_name, provider = s.provider, config_hash = s.config_hash,
                suite = job.inst.problem.suite, problem_id = job.inst.problem.id, problem_name = job.inst.problem.name,
                sample = job.sample, turn = job.turn, format = s.format,
                prompt = job.conv.prompt.system .. "\n\n" .. job.messages[#job.messages].content, request = job.record,
                response = http.redact(res.body or "", s.secrets), latency_s = res.latency_s,
                retries = res.retries, attempts = #res.attempts }
  if not reply.ok then
    row.status, row.error = "error", text.clean(reply.message)
  else
    row.reply, row.finish, row.request_id = http.redact(reply.text, s.secrets), reply.finish, reply.request_id
    row.input_tokens, row.output_tokens = reply.input_tokens, reply.output_tokens
    if cfg.price_in and cfg.price_out and reply.input_tokens and reply.output_tokens then
      row.cost_usd = (reply.input_tokens * cfg.price_in + reply.output_tokens * cfg.price_out) / 1e6
    end
    local c, why, detail = extract.candidate(reply.text, s.format)
    if c then
      row.status, row.candidate_file, row.candidate_hash = "ok", job.file, util.hash(c.code)
      job.code = c.code
    else
      row.status, row.error = why, text.clean(detail)
    end
  end
  self.db:save_generation(row)
  job.row = self.db:find_generation(job.key)
  return reply
end

local function label(job)
  return ("%s sample %d turn %d"):format(job.inst.problem.name, job.sample, job.turn)
end

-- hooks(o, job_of) -> o (a copy of the HTTP options) with kreach.http's hooks feeding the
-- tracker (job_of(i): request i's job)
function Session:hooks(job_of)
  local o = {}
  for k, v in pairs(self.hopts) do o[k] = v end
  o.on_start = function(i) self.tracker:start(job_of(i)) end
  o.on_retry = function(i, att, wait_s, retry)
    local job = job_of(i)
    self.tracker:retry(job, label(job), wait_s, progress_mod.reason(att), retry)
  end
  o.on_tick = function() self.tracker:tick() end
  return o
end

-- a reply's request done: its line (a failed request's even with --quiet), the tracker told
function Session:done(job, res)
  local r = job.row
  local l = ("kreach generate: %s: %s%s%s"):format(label(job), r.status,
    (r.finish == "length" or r.finish == "max_tokens") and " (truncated)" or "",
    r.error and (": " .. text.clean(r.error, 200)) or "")
  if self.args.quiet and r.status == "error" then io.stderr:write(l, "\n") else self.tracker:line(l) end
  self.tracker:finished(job, res.latency_s)
end

-- evaluates the jobs' candidates that have no verdict yet (--eval: a GPU), per problem
function Session:evaluate(jobs)
  local args = self.args
  local by_problem, order = {}, {}
  local have = self.db:verdicts()
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
      args.turns, M.eval_hint(args.targets, args.out, self.db_path)))
  end
  local sok, serr = seal.check_available("generate")
  if not sok then errors.raise(errors.STATUS.load, serr, "seal") end
  self.db:close()
  for _, path in ipairs(order) do
    -- kreach eval's defaults (PyTorch timed beside, unless --no-torch): the same evaluation
    -- key, so that kreach eval and generate --eval reuse each other's evaluations
    ev.run{ target = path, candidates = by_problem[path], dtype = args.dtype, sizes = {}, policy = {}, db = self.db_path, timeout_s = 60,
            torch = { enabled = not args.no_torch, compile = false, cudnn_tf32 = false },
            tty = false, command = { "kreach", "generate", "--eval" }, jobs = args.jobs or builds.cores(),
            log = function(l) io.stderr:write("kreach generate: eval: ", l, "\n") end }
  end
  self.db = store.open(self.db_path)
end

-- turn_jobs(turn) -> the turn's jobs (one for each active conversation), and those to ask: a
-- stored reply answers again; a stored failure (the request never got one) is asked again
function Session:turn_jobs(turn)
  local s = self.s
  local tjobs, asks = {}, {}
  for _, cv in ipairs(self.convs) do
    if cv.active then
      local msgs = {}
      for i, m in ipairs(cv.messages) do msgs[i] = m end
      local k = M.job_key(s, cv.prompt, msgs, cv.sample, turn)
      local job = { conv = cv, inst = cv.inst, sample = cv.sample, turn = turn, key = k, messages = msgs,
                    file = ("%03d_%s_s%d_t%d.%s"):format(cv.inst.problem.id or 0, s.model_name, cv.sample, turn, self.ext) }
      local cached = not self.args.refresh and self.db:find_generation(k)
      if cached and cached.status ~= "error" then job.row = cached; job.cached = true else asks[#asks + 1] = job end
      tjobs[#tjobs + 1] = job
      self.jobs[#self.jobs + 1] = job
      cv.jobs = cv.jobs or {}
      cv.jobs[#cv.jobs + 1] = job
    end
  end
  return tjobs, asks
end

-- ask(asks) -> false when the run's first request was refused (400, 401, 403, 404: a bad key or
-- a bad request stops the run before the others go; self.stopped says why), true otherwise
function Session:ask(asks)
  if #asks > 0 and self.made == 0 then
    local first = table.remove(asks, 1)
    local res = http.run({ self:request_of(first) }, self:hooks(function() return first end))
    self.made = self.made + 1
    local reply = self:record(first, res[1])
    self:done(first, res[1])
    if not reply.ok and (reply.status == 400 or reply.status == 401 or reply.status == 403 or reply.status == 404) then
      self.stopped = text.clean(reply.message, 2000)
      return false
    end
  end
  if #asks > 0 then
    local reqs = {}
    for i, job in ipairs(asks) do reqs[i] = self:request_of(job) end
    -- each reply is stored as it arrives: a killed run resumes with what came
    local o = self:hooks(function(i) return asks[i] end)
    o.on_done = function(i, res)
      self.made = self.made + 1
      self:record(asks[i], res)
      self:done(asks[i], res)
    end
    http.run(reqs, o)
  end
  return true
end

-- the turn's candidates' files and manifest entries, then manifest.json
function Session:write_candidates(tjobs)
  for _, job in ipairs(tjobs) do
    local r = job.row
    if r and r.status == "ok" then
      if not job.code then
        local c = extract.candidate(r.reply or "", self.s.format)
        job.code = c and c.code
      end
      if job.code then
        self.manifest:add(job.file, job.code, { file = job.file, problem = job.inst.problem.id,
          origin = { model = self.s.model_name, sample = job.sample, turn = job.turn, request_id = r.request_id } })
      end
    end
  end
  self.manifest:save()
end

-- the next turn's message of each conversation: its reply and the verdict (a failed request
-- ends the conversation)
function Session:feed_back(tjobs)
  local have = self.db:verdicts()
  for _, job in ipairs(tjobs) do
    local r, cv = job.row, job.conv
    if r.status == "error" then
      cv.active = false
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

-- the session: the model's settings, the problems, the database opened, the conversations (one
-- a (problem, sample)) with their first message. A run without the API key that must ask
-- everything (--refresh, or no database yet) stops here, before anything is written.
local function open(args)
  local s = M.configure(args)
  local insts = M.problems(args.targets, args.dtype)
  if args.refresh or not lfs.attributes(args.db) then M.need_key(s) end
  -- the prompt's device facts: a GPU's only (the host device's are the emulation's). --eval
  -- needs a GPU: refused now, before any request is paid for
  if args.eval then kdevice.require("kreach generate --eval") end
  local device = kdevice.cuda()
  local self = setmetatable({ args = args, s = s, db_path = args.db, convs = {}, jobs = {}, made = 0,
                              ext = s.format == "lua" and "lua" or "py",
                              hopts = { concurrency = args.concurrency, retries = args.retries, timeout_s = args.timeout } },
                            Session)
  self.db = store.open(self.db_path)
  for _, inst in ipairs(insts) do
    local pr = prompt_mod.build(inst, { format = s.format, device = device })
    for smp = 1, args.samples do
      -- --shard: only this shard's (problem, sample) pairs (kreach.run.plan's shards)
      if not args.shard or plan.shard_of(plan.sample_key(inst.problem.name, smp), args.shard.count) == args.shard.index then
        self.convs[#self.convs + 1] = { inst = inst, prompt = pr, sample = smp, active = true,
                                        messages = { { role = "user", content = pr.user } } }
      end
    end
  end
  return self
end

-- --out made and its manifest read: once the first turn's requests are known to be possible
function Session:open_out()
  if self.manifest then return end
  local args = self.args
  local mok, merr = output.mkdirs(args.out)
  if not mok then errors.file(args.out, "cannot create the directory: " .. tostring(merr)) end
  self.manifest = manifest.open(args.out, self.db_path)
end

-- run(args) -> what the run did, for kreach.results.summary.generate: { model, provider, priced,
-- jobs, convs, made, stopped, verdicts, samples, turns, db, out }. args are the command's
-- (targets, model, provider, base_url, api_key_env, samples, turns, eval, no_torch, out, db,
-- concurrency, temperature, max_tokens, timeout, retries, format, dtype, refresh, quiet).
-- Every job's key is looked up before a request goes: the API key is needed only where one
-- must (a usage error then, as configure's was).
function M.run(args)
  local self = open(args)
  for turn = 1, args.turns do
    local tjobs, asks = self:turn_jobs(turn)
    if #tjobs == 0 then break end
    if #asks > 0 then
      local ok, err = pcall(M.need_key, self.s)
      if not ok then self.db:close(); error(err, 0) end
    end
    self:open_out()
    self.tracker = progress_mod.new{ total = #asks, concurrency = args.concurrency, retries = args.retries,
                                     tty = progress.isatty(io.stderr), now = kcore.now, quiet = args.quiet }
    if not self:ask(asks) then self.tracker:close(); break end
    self.tracker:close()
    self:write_candidates(tjobs)
    -- judged (where a next turn needs it, or --eval asks), then the next turn's message
    if turn < args.turns or args.eval then self:evaluate(tjobs) end
    if turn < args.turns then self:feed_back(tjobs) end
  end
  local have = self.db:verdicts()
  self.db:close()
  local s = self.s
  return { model = s.model_name, provider = s.provider, priced = (s.cfg.price_in and s.cfg.price_out) and true or false,
           jobs = self.jobs, convs = self.convs, made = self.made, stopped = self.stopped, verdicts = have,
           samples = args.samples, turns = args.turns, db = self.db_path, out = args.out }
end

return M
