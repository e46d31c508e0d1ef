-- kreach.cli: runs `kreach <command> args`. A command is the module kreach.cmd.<name>, which
-- returns { summary = "...", parser = function(argparse) -> parser, run = function(args) ->
-- exit status }. Usage errors exit 2; a user error a command raises (kreach.errors) is printed
-- as `kreach <command>: <message>` and exits with its status; a command that needs a GPU and
-- finds none raises "no CUDA device: ...", which the binary turns into exit 77; anything else
-- is a bug: a traceback and exit 99.
local argparse = require "argparse"
local errors = require "kreach.errors"
local json = require "kreach.json"
local kinds = require "kreach.kinds"
local nvrtc = require "kreach.core.nvrtc"
local seal = require "kreach.run.seal"
local text = require "kreach.text"

local cli = {}

-- The names of the commands: embedded modules, plus files under $KREACH_LUA_DIR when set.
function cli.commands()
  local names, seen = {}, {}
  local function add(n)
    if not seen[n] then seen[n] = true; names[#names + 1] = n end
  end
  for _, m in ipairs(package.loaded["kreach.embedded"] or {}) do
    local n = m:match("^kreach%.cmd%.([%w_%-]+)$")
    if n then add(n) end
  end
  local dev = os.getenv("KREACH_LUA_DIR")
  if dev and dev ~= "" then
    local ok, lfs = pcall(require, "lfs")
    if ok and lfs.attributes(dev .. "/kreach/cmd", "mode") == "directory" then
      for f in lfs.dir(dev .. "/kreach/cmd") do
        local n = f:match("^([%w_%-]+)%.lua$")
        if n then add(n) end
      end
    end
  end
  table.sort(names)
  return names
end

local function load_command(name)
  if not name:match("^[%w_%-]+$") then return nil end
  local modname = "kreach.cmd." .. name
  for _, searcher in ipairs(package.searchers) do
    local loader = searcher(modname)
    if type(loader) == "function" then return require(modname) end -- require: a command is found by its name (cmd/<name>.lua)
  end
  return nil
end
cli.load_command = load_command

-- argparse converters that check a value where it is parsed, so that a bad one is a usage
-- error (status 2) naming the value, before any work starts.
local function number(what, test, integer)
  return function(s)
    local x = tonumber(s)
    if x and x == x and x ~= math.huge and x ~= -math.huge and (not integer or math.tointeger(x)) and test(x) then
      return integer and math.tointeger(x) or x
    end
    return nil, ("'%s' is not %s"):format(tostring(s), what)
  end
end
cli.positive_number = number("a positive number", function(x) return x > 0 end)
cli.nonnegative_number = number("a number of 0 or more", function(x) return x >= 0 end)
cli.positive_integer = number("a positive integer", function(x) return x >= 1 end, true)
cli.nonnegative_integer = number("an integer of 0 or more", function(x) return x >= 0 end, true)

-- A --size override: name=value with a positive integer value (kept as the string).
function cli.size_override(s)
  local k, v = s:match("^([%a_][%w_]*)=(.*)$")
  if not k then return nil, ("--size takes name=value, got '%s'"):format(s) end
  local n = math.tointeger(tonumber(v))
  if not n or not v:match("^%d+$") then return nil, ("--size %s: '%s' is not a positive integer"):format(k, v) end
  if n < 1 then return nil, ("--size %s: a size of %d is not allowed (sizes are at least 1)"):format(k, n) end
  return s
end

cli.DTYPES = kinds.DTYPES

-- The options every problem command shares: --dtype and repeated --size name=value.
function cli.problem_options(p)
  p:option("--dtype", "The problem's dtype: " .. kinds.words(kinds.DTYPES) .. ".", kinds.DTYPES[1]):choices(cli.DTYPES)
  p:option("--size", "Override a size: name=value (a positive integer).", nil):count("*"):convert(cli.size_override)
end

-- The arguments with a negative number after an option joined to it ("--seed -3" as
-- "--seed=-3"): argparse would read "-3" as an option. Nothing kreach takes as a positional
-- argument looks like a negative number.
function cli.join_negative(argv)
  local out = {}
  for _, a in ipairs(argv) do
    local prev = out[#out]
    if prev and a:match("^%-%.?%d") and prev:match("^%-%-[%w][%w_%-]*$") then
      out[#out] = prev .. "=" .. a
    else
      out[#out + 1] = a
    end
  end
  return out
end

-- argparse converters: a positive number of seconds; a size such as 8G or 512M (in bytes).
function cli.positive_seconds(s)
  local x = tonumber(s)
  if not x or x ~= x or x <= 0 or x == math.huge then
    return nil, ("'%s' is not a positive number of seconds"):format(tostring(s))
  end
  return x
end
function cli.memory_size(s) return seal.parse_size(s) end

-- --arch: an architecture the worker can compile for and check launches against: of the form
-- NVRTC's build takes (runtime/kr_nvrtc.c's valid_arch: sm_ and two or three digits, then an
-- optional a or f), and one kreach knows launch limits for (kreach.core.nvrtc.arch_known, whose
-- own parse reads only the digits: sm_90x passed it, and the worker's build then raised).
function cli.arch(a)
  local ok, why = nvrtc.arch_known(a)
  if not ok then return nil, why end
  if not a:match("^sm_%d%d%d?[af]?$") then
    return nil, ("--arch '%s' is not of the form sm_90 (or sm_90a, sm_100f)"):format(a)
  end
  return a
end

-- --lua-memory: a candidate's Lua heap (kreach.candidate.lua.HEAP_BYTES), at least 1 MiB (a
-- candidate's own Lua needs kilobytes) and below the 8 EiB a Lua integer holds.
cli.DEFAULT_LUA_MEMORY = "256M"
function cli.lua_memory_size(s)
  local num, unit = tostring(s):upper():match("^%s*(%d+%.?%d*)%s*([KMGT]?)I?B?%s*$")
  local scale = { [""] = 1, K = 2 ^ 10, M = 2 ^ 20, G = 2 ^ 30, T = 2 ^ 40 }
  local bytes = num and math.floor(tonumber(num) * scale[unit])
  if not bytes then return nil, ("'%s' is not a size (such as 256M or 1G)"):format(tostring(s)) end
  if bytes >= 2 ^ 63 then return nil, ("'%s' is too large a Lua heap (below 8 EiB)"):format(tostring(s)) end
  if bytes < 2 ^ 20 then return nil, ("'%s' is too small a Lua heap: at least 1 MiB"):format(tostring(s)) end
  return math.tointeger(bytes)
end

-- The options of the commands that start workers (check, lint, eval, bench): the time limit of
-- a phase, each worker's memory limit and a candidate's Lua heap (docs/candidates.md, "The seal").
function cli.worker_options(p, timeout_help)
  -- --phase-timeout, not --timeout: list's --load-timeout and generate's --request-timeout are
  -- other limits. --timeout stays an alias (here it means only this), and args.timeout the target.
  p:option("--phase-timeout --timeout", timeout_help or "Seconds each phase of the worker may take (its start-up gets at least 120); --timeout is the old spelling.",
    "60"):convert(cli.positive_seconds):target("timeout"):argname("<seconds>")
  p:option("--worker-memory", "Each worker's memory limit (RLIMIT_DATA), such as 8G or 512M (default: the smaller of 16G and half the RAM).",
    nil):convert(cli.memory_size)
  p:option("--lua-memory", "The most Lua heap a candidate's Lua code may hold, such as 256M or 1G.",
    cli.DEFAULT_LUA_MEMORY):convert(cli.lua_memory_size)
end

-- The --size overrides as a table, or nil and a message for a malformed one.
function cli.sizes(list)
  local sizes = {}
  for _, s in ipairs(list or {}) do
    local ok, why = cli.size_override(s)
    if not ok then return nil, why end
    local k, v = s:match("^(.-)=(.*)$")
    sizes[k] = math.tointeger(tonumber(v))
  end
  return sizes
end

-- The results database option of every command that has one: --db, default $KREACH_DB when
-- set and not empty, else results.db (in the working directory).
function cli.default_db()
  local env = os.getenv("KREACH_DB")
  if env and env ~= "" then return env end
  return "results.db"
end
function cli.db_option(p)
  return p:option("--db", "The results database (default: $KREACH_DB, else results.db).", cli.default_db()):show_default(false)
end

-- The options of commands that time (eval, bench): the timing engine's (kreach.judge.timing), the
-- evaluation's (kreach.judge.measure) and the results database.
function cli.timing_options(p)
  p:option("--mode", "Timing mode: cold (L2 flushed before each sample), hot (back to back) or graph (CUDA-graph replay).", nil)
    :choices(kinds.MODES)
  p:option("--budget", "Seconds of sampling per measurement (default 2).", nil):convert(cli.positive_number)
  p:option("--rel-ci", "Stop once the 95% interval of each median is narrower than this fraction of it (default 0.01).", nil):convert(cli.positive_number)
  p:option("--min-samples", "At least this many samples (default 10).", nil):convert(cli.positive_integer)
  p:option("--max-samples", "At most this many samples (default 10000).", nil):convert(cli.positive_integer)
  p:option("--flush-factor", "Cold mode writes this many times the L2 size before a sample (default 2).", nil):convert(cli.positive_number)
  p:option("--timing-seed", "Seed of the timing inputs and of the bootstrap (default 1).", nil):convert(cli.positive_integer)
  p:option("--sol-margin", "A time this fraction below the speed-of-light bound is impossible (default 0.25).", nil):convert(cli.nonnegative_number)
  p:option("--timing-sets", "The timed calls rotate over this many input sets, each with new values every round (default 2; fewer where memory is short).", nil):convert(cli.positive_integer)
  p:flag("--no-torch", "Do not time PyTorch beside kreach (it is, by default, where a python3 with CUDA PyTorch is found: KREACH_PYTHON, else python3).")
  p:flag("--torch-compile", "Time the problem's model under torch.compile too, beside eager.")
  p:flag("--torch-tf32", "Time PyTorch with cuDNN's TF32 on, as PyTorch ships (default off: fp32 convolutions in fp32, as kreach's baselines compute them).")
  cli.db_option(p)
  cli.worker_options(p, "Seconds each worker phase may take (timing gets more; start-up at least 120); --timeout is the old spelling.")
  p:flag("--json", "Print one JSON object.")
end

-- The overrides the timing options ask for: timing, measure (nil where the default stands), and
-- PyTorch's timing: { enabled, compile, cudnn_tf32 }.
-- Each value comes checked and converted by the parser (integers where integers are due); what
-- depends on several (a flush factor below 2 in cold mode) is checked where the options are
-- resolved, once (kreach.run.evaluate.resolve), as a usage error.
function cli.timing_overrides(args)
  local t, m = {}, {}
  if args.mode then t.mode = args.mode end
  if args.budget then t.budget_s = args.budget end
  if args.rel_ci then t.rel_ci = args.rel_ci end
  if args.min_samples then t.min_samples = args.min_samples end
  if args.max_samples then t.max_samples = args.max_samples end
  if args.flush_factor then t.flush_factor = args.flush_factor end
  if args.timing_seed then
    t.seed = args.timing_seed
    m.seed = t.seed
  end
  if args.sol_margin then m.sol_margin = args.sol_margin end
  if args.timing_sets then m.sets = args.timing_sets end
  return t, m, { enabled = not args.no_torch, compile = args.torch_compile or false, cudnn_tf32 = args.torch_tf32 or false }
end

-- Prints a user error: `kreach <command>: <message>`; no GPU is `kreach: no CUDA device: ...`,
-- as the binary says it for every command and script (docs/cli.md). With `as_json` (the
-- command's --json) the error is also the one JSON document on standard output:
-- {"command":..., "error": <the message>, "kind": ..., "status": <the exit status>}, so that a
-- caller parsing the output gets an object, not nothing (docs/cli.md, "JSON output").
function cli.report(name, e, as_json)
  local prefix = errors.status(e) == errors.STATUS.no_device and "kreach" or ("kreach " .. name)
  io.stderr:write(prefix, ": ", errors.message(e), "\n")
  if as_json then
    io.stdout:write(json.encode({ command = name, error = errors.message(e), kind = errors.is(e) and e.kind or "usage",
                                  status = errors.status(e) }), "\n")
  end
end

-- Whether the words ask for JSON: a --json before any "--" (after it, the words are a program's
-- own, as in kreach profile -- prog --json). For a usage error argparse raises before it has
-- parsed anything.
local function asks_json(argv)
  for _, a in ipairs(argv) do
    if a == "--" then return false end
    if a == "--json" then return true end
  end
  return false
end

function cli.main(name, ...)
  local cmd = load_command(name)
  if not cmd then
    local near = text.suggest(name, cli.commands())
    io.stderr:write(("kreach: unknown command '%s'%s (try 'kreach help')\n"):format(name,
      near and (": did you mean '%s'?"):format(near) or ""))
    return 2
  end
  local parser = argparse("kreach " .. name, cmd.summary)
  if cmd.parser then cmd.parser(parser) end
  local argv = cli.join_negative({...})
  local ok, args = parser:pparse(argv)
  if not ok then
    io.stderr:write(parser:get_usage(), "\n\n")
    cli.report(name, errors.new(errors.STATUS.usage, args), asks_json(argv))
    return 2
  end
  -- a user error (kreach.errors: a file that does not load, a bad value, a database that
  -- cannot be used) is its message and its status; anything else that escapes a command is a
  -- bug, reported with its traceback (status 99, by the binary)
  local ok, status = xpcall(cmd.run, function(e)
    if errors.is(e) then return e end
    return debug.traceback(tostring(e), 2)
  end, args)
  if not ok then
    if errors.is(status) then
      cli.report(name, status, args.json)
      return errors.status(status)
    end
    error(status, 0)
  end
  if status == nil or status == true then return 0 end
  if status == false then return 1 end
  return status
end

return cli
