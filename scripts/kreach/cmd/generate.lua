-- kreach generate <suite|problem...> --model NAME: asks a language model for candidates (issue 19;
-- --eval is not yet run on a GPU). The work is kreach.generate.session's (prompts built from the
-- problems alone, requests through the provider's API with retries, replies stored in the results
-- database so that a second identical run makes no request, on any machine, candidates written to
-- --out DIR with a manifest.json that `kreach eval` reads); the summary is kreach.results.summary's
-- (with --eval, its evaluation figures are `kreach results summary`'s over this run's candidates).
-- The API key is read from the environment only, written nowhere, and needed only when a request
-- must be sent. Exit 1 when a request got no reply after
-- its retries (what came is kept) or the first one was refused (400, 401, 403, 404).
-- docs/generate.md.
local cli = require "kreach.cli"
local errors = require "kreach.errors"
local json = require "kreach.json"
local kinds = require "kreach.kinds"
local plan = require "kreach.run.plan"
local session = require "kreach.generate.session"
local progress = require "kreach.generate.progress"
local summary = require "kreach.results.summary"
local store = require "kreach.results.store"

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
    p:option("--jobs", "With --eval: build workers ahead of the GPU worker (kreach eval's --jobs; default: the number of cores; 0: none)."):convert(cli.nonnegative_integer)
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
    p:option("--shard", "Only shard i of N of the (problem, sample) pairs (i from 1; kreach slurm, docs/cluster.md).")
      :argname("<i/N>"):convert(plan.parse_shard)
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
    if args.jobs and not args.eval then errors.usage("--jobs goes with --eval (the build workers of the evaluation here)") end
    local res = session.run(args)
    -- with --eval, the evaluation figures are `kreach results summary`'s over the evaluations of
    -- this run's candidates (docs/generate.md); without, generate's own from the stored verdicts
    local results
    if args.eval then
      local ok, data = store.read(args.db, summary.read)
      if not ok then errors.file(args.db, tostring(data)) end
      results = summary.generate_results(data, summary.generate_hashes(res.jobs), { model = res.model, dtype = args.dtype })
    end
    local sum = summary.generate(res, progress.median, results)
    if args.json then
      io.write(json.encode({ db = args.db, out = args.out, summary = sum, generations = json.array(summary.generate_rows(res.jobs)),
                             results_summary = results and summary.json_doc(results, args.db), stopped = res.stopped }), "\n")
    else
      io.write(summary.generate_text(sum, { db = args.db, out = args.out, priced = res.priced, results = results,
                                            eval_hint = session.eval_hint(args.targets, args.out, args.db) }))
    end
    if res.stopped then
      io.stderr:write("kreach generate: stopped at the first request: ", res.stopped, "\n")
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
