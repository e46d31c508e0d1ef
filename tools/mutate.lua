-- tools/mutate.lua: the mutation check of issue 20. It plants known bugs in kreach's checker,
-- one at a time, runs the tests that should catch each, and reports the ones that survive.
-- A benchmark, not a CI test (a few minutes on 2 cores: the operator mutants run their problems
-- on the host device, KREACH_DEVICE=host):
--
--   build/kreach tools/mutate.lua [--json] [--keep] [--whole-suite [--build DIR] [-j N]] [ID ...]
--
-- --whole-suite judges each Lua mutant by the whole CPU suite (ctest in the build tree, the
-- tests labelled gpu left out), not only by the specs named for it: the named specs run first
-- (the quick way to a catch), and the rest of the suite only when they pass. A mutant survives
-- only when every CPU test passes. Before any mutant the unmutated suite must pass. C mutants are
-- still judged by their own test program, compiled against the mutated file (the binary is not
-- rebuilt per mutant). --build names the build tree (default build/), -j ctest's jobs (default
-- the CPUs).
--
-- Nothing in the source tree is changed. A Lua mutant is planted in a copy of scripts/ in a
-- temporary directory, and the tests run with KREACH_LUA_DIR pointing at that copy (the
-- binary's embedded modules are overridden). A C mutant is planted in a copy of its file, and
-- its test is compiled against the copy with cc. Before any mutant, every test named below is
-- run on the unmutated code: a test that fails there would "catch" everything, so the tool
-- stops. Each mutant names the exact text it replaces; when that text is no longer in the
-- file (the code moved on), the tool says so and fails rather than report a mutant that was
-- never planted.
--
-- Exit status: 0 when every mutant is caught, 1 when one survives, 2 on a usage error or when
-- a mutant cannot be planted or the unmutated tests fail.
local json = require "kreach.json"
local output = require "kreach.atomic"
local kreach = require "kreach"

local MUTANTS = {
  { id = "judge_worst_error", file = "scripts/kreach/judge/check.lua",
    what = "check.judge drops the worst-error condition",
    old = "if m.rel_l2 > th.rel_l2 or m.max_scaled > th.max_scaled then",
    new = "if m.rel_l2 > th.rel_l2 then",
    specs = { "check" } },
  { id = "centred_cap_l2", file = "scripts/kreach/judge/check.lua",
    what = "check.thresholds: min changed to max in the centred L2 cap",
    old = "th.centred_l2 = math.min(policy.centred_cap,",
    new = "th.centred_l2 = math.max(policy.centred_cap,",
    specs = { "check" } },
  { id = "centred_cap_max", file = "scripts/kreach/judge/check.lua",
    what = "check.thresholds: min changed to max in the centred worst-error cap",
    old = "th.centred_max = math.min(policy.centred_cap,",
    new = "th.centred_max = math.max(policy.centred_cap,",
    specs = { "check" } },
  { id = "unwritten_1pct", file = "scripts/kreach/judge/check.lua",
    what = "check allows 1% of an output unwritten",
    old = "if u and u > 0 then",
    new = "if u and u > 0.01 * r.outs[i].n then",
    specs = { "check" } },
  { id = "stop_half_width", file = "scripts/kreach/stats.lua",
    what = "stats.should_stop's rule on the half-width of the median's interval",
    old = "(hi - lo) <= o.rel_ci * M.median(xs)",
    new = "(hi - lo) / 2 <= o.rel_ci * M.median(xs)",
    specs = { "stats" } },
  { id = "export_invalid_compiled", file = "scripts/kreach/results/report.lua",
    what = "the KernelBench export writes invalid_candidate as compiled",
    old = "local NO_COMPILE = { compile_error = true, invalid_candidate = true }",
    new = "local NO_COMPILE = { compile_error = true }",
    specs = { "results_export" } },
  { id = "json_keys_unescaped", file = "scripts/kreach/json.lua",
    what = "JSON object keys written without escaping",
    old = [[out[#out + 1] = encode_string(k) .. ":"]],
    new = [[out[#out + 1] = '"' .. k .. '":']],
    specs = { "json", "store" } },
  { id = "rel_l2_no_sqrt", file = "scripts/kreach/ops/compare.lua",
    what = "the judge's relative L2 without its square root",
    old = "m.rel_l2 = ratio(math.sqrt(m.sum_d2), math.sqrt(m.sum_r2))",
    new = "m.rel_l2 = ratio(m.sum_d2, m.sum_r2)",
    specs = { "ops_compare" } },
  { id = "oracle_rel_l2_no_sqrt", file = "scripts/kreach/ops/compare.lua",
    what = "the oracle check's relative L2 without its square root",
    old = "rel_l2 = r[2] > 0 and math.sqrt(r[1] / r[2]) or math.sqrt(r[1]),",
    new = "rel_l2 = r[2] > 0 and r[1] / r[2] or r[1],",
    specs = { "ops_compare" } },
  -- beyond the issue's list: the evaluation key, resume and the JSON reader
  { id = "eval_key_no_candidate", file = "scripts/kreach/run/plan.lua",
    what = "the evaluation key leaves out the candidate's text",
    old = "return { item.problem_hash, item.candidate_hash }",
    new = "return { item.problem_hash }",
    specs = { "eval_key" } },
  { id = "worker_spec_no_candidate_hash", file = "scripts/kreach/run/pair.lua",
    what = "the worker's spec leaves out the candidate's hash",
    old = "candidate_hash = item.candidate_hash,",
    new = "candidate_hash = nil,",
    specs = { "eval_pair" } },
  { id = "eval_key_no_device", file = "scripts/kreach/run/campaign.lua",
    what = "the evaluation key leaves out the device",
    old = "econf.device = dev.uuid",
    new = "econf.device = nil",
    specs = { "eval_key" } },
  { id = "resume_any_status", file = "scripts/kreach/run/campaign.lua",
    what = "resume picks up finished runs, not only those still running",
    old = [[db:latest_run{ config_hash = rconf_hash, status = "running" }]],
    new = [[db:latest_run{ config_hash = rconf_hash }]],
    specs = { "store_resume" } },
  { id = "resume_reuse_ignores_force", file = "scripts/kreach/run/campaign.lua",
    what = "--force does not re-evaluate stored results",
    old = "(spec.reuse ~= false and db:find_evaluation(item.eval_key))",
    new = "db:find_evaluation(item.eval_key)",
    specs = { "store_resume" } },
  { id = "json_negative_zero", file = "scripts/kreach/json.lua",
    what = "the JSON reader turns -0.0 into 0.0",
    old = "return x -- a float already",
    new = "return x + 0.0 -- a float already",
    specs = { "json" } },
  -- a wrong formula in an operator: the baseline and the oracle share it, so only PyTorch sees
  -- it (tests/lua/host_values_spec.lua on the host device, the problems that use the operator)
  { id = "softsign_formula", file = "scripts/kreach/ops/elementwise.lua",
    what = "softsign as x / (1 + x) (the absolute value dropped)",
    old = "if (OP == SOFTSIGN) return x / ((A)1 + kabs(x));",
    new = "if (OP == SOFTSIGN) return x / ((A)1 + x);",
    specs = { "host_values" }, env = { KREACH_DEVICE = "host", KREACH_HOST_ONLY = "^30_" } },
  { id = "norm_eps_outside", file = "scripts/kreach/ops/norm.lua",
    what = "the normalisations' eps outside the square root",
    old = "else { c0 = b; c1 = 1.0 / sqrt(c / a + eps); }",
    new = "else { c0 = b; c1 = 1.0 / (sqrt(c / a) + eps); }",
    specs = { "host_values" }, env = { KREACH_DEVICE = "host", KREACH_HOST_ONLY = "^40_" } },
  { id = "smooth_l1_beta", file = "scripts/kreach/ops/loss.lua",
    what = "smooth L1's linear branch without its -0.5 beta",
    old = "return d < a ? d * d * b : d - (A)0.5 * a;",
    new = "return d < a ? d * d * b : d;",
    specs = { "host_values" }, env = { KREACH_DEVICE = "host", KREACH_HOST_ONLY = "^96_" } },
  { id = "hinge_clamp", file = "scripts/kreach/ops/loss.lua",
    what = "the hinge loss without its clamp at 0",
    old = "if (OP == HINGE) { A v = (A)1 - x * y; return v < (A)0 ? (A)0 : v; }",
    new = "if (OP == HINGE) { A v = (A)1 - x * y; return v; }",
    specs = { "host_values" }, env = { KREACH_DEVICE = "host", KREACH_HOST_ONLY = "^100_" } },
  -- the emulation the host device and the CPU specs run kernels on
  { id = "emulate_returned_count", file = "scripts/kreach/emulate.lua",
    what = "a thread that has returned still counts at its block's barrier",
    old = "  b.live--;\n  if (b.live > 0 && b.count >= b.live)",
    new = "  if (b.live > 0 && b.count >= b.live)",
    specs = { "emulate" } },
  { id = "emulate_barrier_no_wait", file = "scripts/kreach/emulate.lua",
    what = "__syncthreads that does not wait for the block",
    old = "  while (b.gen == gen) emu_yield();",
    new = "  (void)gen;",
    specs = { "emulate" } },
  { id = "host_runs_candidates", file = "scripts/kreach/device.lua",
    what = "the host device not refused where a command needs a GPU",
    old = "if what and dev.host then",
    new = "if false and what and dev.host then",
    specs = { "generate_cmd" } },
  -- what session 9 (2026-12-05) added: the host device's argument checks, the KernelBench
  -- lint's module names, the timing plan's order
  { id = "host_launch_unchecked", file = "scripts/kreach/host.lua",
    what = "a host-device launch whose arguments are not checked against the kernel's parameters",
    old = "  if (!kr_check(f, a, name, err, errlen, std::index_sequence_for<A...>{})) return 1;\n",
    new = "",
    specs = { "host_launch" }, env = { KREACH_DEVICE = "host" } },
  { id = "kb_module_sys", file = "scripts/kreach/candidate/pylint.lua",
    what = "the KernelBench lint lets `from torch import sys` through",
    old = [[M.FORBIDDEN_MODULES = { "sys", ]],
    new = [[M.FORBIDDEN_MODULES = { "no_sys", ]],
    specs = { "kbcandidate" } },
  { id = "timing_order_twice", file = "scripts/kreach/judge/timing.lua",
    what = "timing.measure takes a plan.order that names a subject twice",
    old = "if not subjects[i] or seen[i] then",
    new = "if not subjects[i] then",
    specs = { "timing" } },
  { id = "sig_function_pointer", file = "runtime/kr_sig.c",
    what = "a function-pointer kernel parameter made a hard parse error",
    old = [[else if (is(k, "(")) fn = 1;]],
    new = [[else if (is(k, "(")) { free(kx); return fail(s->err, s->errlen, "line %d: a function pointer", k->line); }]],
    ctest = { name = "sig", srcs = { "tests/c/test_sig.c", "runtime/kr_sig.c", "runtime/kr_sig_demangle.c" } } },
  -- issue 34, items 1 and 2: known answers for the figures a user reads, and the timed protocol
  -- on the host device (tests/lua/known_*_spec.lua, protocol_*_spec.lua)
  { id = "poison_baseline_not_candidate", file = "scripts/kreach/judge/subjects.lua",
    what = "measure poisons the baseline's outputs before a candidate call, not the candidate's",
    old = [[if who == "candidate" then return modes.get(mode).poison_baseline_for_candidate and { "candidate", "baseline" } or { "candidate" } end]],
    new = [[if who == "candidate" then return { "baseline" } end]],
    specs = { "protocol_measure" }, env = { KREACH_DEVICE = "host" } },
  { id = "cold_baseline_not_poisoned", file = "scripts/kreach/judge/modes/cold.lua",
    what = "in cold mode the baseline's outputs are not poisoned before a candidate call",
    old = [[poison_baseline_for_candidate = true,]],
    new = [[poison_baseline_for_candidate = false,]],
    specs = { "protocol_measure" }, env = { KREACH_DEVICE = "host" } },
  { id = "timing_mismatch_verdict_lost", file = "scripts/kreach/judge/measure.lua",
    what = "a wrong value found while timing loses its verdict",
    old = [[if type(m) == "table" and m.verdict then return fail(m.verdict) end]],
    new = "if false then return fail(m.verdict) end",
    specs = { "protocol_measure" }, env = { KREACH_DEVICE = "host" } },
  { id = "first_call_not_judged", file = "scripts/kreach/judge/rounds.lua",
    what = "the oracle does not judge the first call on each input set",
    old = "if not state.judged[k] then",
    new = "if false then",
    specs = { "protocol_measure" }, env = { KREACH_DEVICE = "host" } },
  { id = "no_redraw_between_rounds", file = "scripts/kreach/judge/sets.lua",
    what = "the input sets are not redrawn between rounds",
    old = [[  self.inst:redraw(self[k].vals, self:next_seed(), self.cache)
  if self.mirrored]],
    new = "  if self.mirrored",
    specs = { "protocol_measure" }, env = { KREACH_DEVICE = "host" } },
  { id = "speedup_inverted", file = "scripts/kreach/judge/timing.lua",
    what = "the speedup computed as the candidate's time over the baseline's",
    old = "local r = M.ratio(baseline.samples, candidate.samples, o)",
    new = "local r = M.ratio(candidate.samples, baseline.samples, o)",
    specs = { "protocol_timing", "protocol_measure" }, env = { KREACH_DEVICE = "host" } },
  { id = "timing_default_level_90", file = "scripts/kreach/judge/policy.lua",
    what = "timing's default interval level 90%, still labelled 95%",
    old = [[  level = 0.95,
]],
    new = [[  level = 0.90,
]],
    specs = { "protocol_timing" }, env = { KREACH_DEVICE = "host" } },
  { id = "sets_not_rotated", file = "scripts/kreach/judge/timing.lua",
    what = "timing.measure does not rotate the input sets",
    old = "return { (round - 1) % sets + 1 }",
    new = "return { 1 }",
    specs = { "protocol_timing", "protocol_measure" }, env = { KREACH_DEVICE = "host" } },
  { id = "flush_in_hot_mode", file = "scripts/kreach/judge/modes/hot.lua",
    what = "the L2 flush runs in hot mode too",
    old = [[  return sampler:timed_call(s, set)]],
    new = "  sampler.flush_bytes = sampler.dev.flush(sampler.o.flush_factor)\n  return sampler:timed_call(s, set)",
    specs = { "protocol_timing" }, env = { KREACH_DEVICE = "host" } },
  { id = "median_ci_hi_end_off_by_one", file = "scripts/kreach/stats.lua",
    what = "the median's interval takes the wrong upper order statistic",
    old = "return s[j], s[n - j + 1]",
    new = "return s[j], s[n - j]",
    specs = { "known_stats" } },
  { id = "should_stop_ignores_level", file = "scripts/kreach/stats.lua",
    what = "the stopping rule ignores the level option",
    old = "local lo, hi = M.median_ci(xs, o.level)",
    new = "local lo, hi = M.median_ci(xs)",
    specs = { "known_stats", "protocol_timing" }, env = { KREACH_DEVICE = "host" } },
  { id = "ratio_ci_ends_swapped", file = "scripts/kreach/stats.lua",
    what = "the speedup interval's ends swapped",
    old = "return ratio, quantile_sorted(rs, alpha), quantile_sorted(rs, 1 - alpha)",
    new = "return ratio, quantile_sorted(rs, 1 - alpha), quantile_sorted(rs, alpha)",
    specs = { "known_stats" } },
  { id = "record_speedup_lo_from_hi", file = "scripts/kreach/results/evaluation.lua",
    what = "the stored speedup_lo is the interval's upper end",
    old = "from = function(t) return t.speedup and t.speedup.lo end",
    new = "from = function(t) return t.speedup and t.speedup.hi end",
    specs = { "known_evaluation" } },
  { id = "record_pytorch_lo_from_hi", file = "scripts/kreach/results/evaluation.lua",
    what = "the stored speedup_pytorch_lo is the upper end",
    old = "return t.ratios and t.ratios.speedup_pytorch and t.ratios.speedup_pytorch.lo end",
    new = "return t.ratios and t.ratios.speedup_pytorch and t.ratios.speedup_pytorch.hi end",
    specs = { "known_evaluation" } },
  { id = "kernelbench_verdict_last_trial", file = "scripts/kreach/results/evaluation.lua",
    what = "the record's KernelBench verdict from the last trial only",
    old = "pass = pass and t.kernelbench.pass == true",
    new = "pass = t.kernelbench.pass == true",
    specs = { "known_evaluation" } },
  { id = "wins_on_ratio", file = "scripts/kreach/results/evaluation.lua",
    what = "a win counted on the ratio, not on speedup_lo > 1",
    old = "if r[ref.lo] and r[ref.lo] > 1 then wins = wins + 1 end",
    new = "if r[ref.field] > 1 then wins = wins + 1 end",
    specs = { "known_evaluation" } },
  { id = "pass_at_k_with_replacement", file = "scripts/kreach/results/summary.lua",
    what = "pass@k as if the k samples were drawn with replacement (1 - (1 - c/n)^k)",
    old = "for i = n - c + 1, n do p = p * (1 - k / i) end",
    new = "p = (1 - c / n) ^ k",
    specs = { "results_summary" } },
  { id = "kb_export_speedup_vs_baseline", file = "scripts/kreach/results/report.lua",
    what = "the KernelBench export's speedup against kreach's baseline, not PyTorch",
    old = "candidate_hash = r.candidate_hash, speedup = r.speedup_pytorch, ref_runtime = r.pytorch_ms,",
    new = "candidate_hash = r.candidate_hash, speedup = r.speedup, ref_runtime = r.pytorch_ms,",
    specs = { "known_evaluation" } },
  { id = "scan_kb_last_trial_only", file = "scripts/kreach/judge/trivial.lua",
    what = "scan-trivial's KernelBench verdict from the last trial only",
    old = "if trial.kernelbench ~= nil then st.kb = st.kb and trial.kernelbench end",
    new = "if trial.kernelbench ~= nil then st.kb = trial.kernelbench end",
    specs = { "protocol_scan" }, env = { KREACH_DEVICE = "host" } },
  { id = "speedup_pytorch_inverted", file = "scripts/kreach/judge/measure.lua",
    what = "the speedup over PyTorch inverted",
    old = [[speedup_pytorch = ratio("pytorch", "candidate"),]],
    new = [[speedup_pytorch = ratio("candidate", "pytorch"),]],
    specs = { "protocol_measure" }, env = { KREACH_DEVICE = "host" } },
  { id = "graph_sample_sum_not_mean", file = "scripts/kreach/judge/modes/graph.lua",
    what = "a graph-mode sample the sum of its calls, not their mean",
    old = [[  return sum / sampler.sets
]],
    new = [[  return sum
]],
    specs = { "protocol_timing" }, env = { KREACH_DEVICE = "host" } },
  -- issue 34, item 3: the input hash covers every byte (tests/lua/hash_inputs_spec.lua on the
  -- host device, where the hash's CUDA source runs; tests/c/test_hash.c for the store's hash)
  { id = "hash_elements_not_bytes", file = "scripts/kreach/ops/compare.lua",
    what = "the input hash covers numel() bytes, not nbytes()",
    old = "local nb = t:nbytes()",
    new = "local nb = t:numel()",
    specs = { "hash_inputs" }, env = { KREACH_DEVICE = "host" } },
  { id = "hash_last_word", file = "scripts/kreach/ops/compare.lua",
    what = "the input hash's kernel leaves out the last whole word",
    old = "i64 words = n / 4;",
    new = "i64 words = (n - 1) / 4;",
    specs = { "hash_inputs" }, env = { KREACH_DEVICE = "host" } },
  { id = "hash_last_byte", file = "scripts/kreach/ops/compare.lua",
    what = "the input hash leaves out the last byte",
    old = "(t, nb, h)",
    new = "(t, nb - 1, h)",
    specs = { "hash_inputs" }, env = { KREACH_DEVICE = "host" } },
  { id = "hash_no_params", file = "scripts/kreach/judge/check.lua",
    what = "the inputs' hashes leave out the parameters",
    old = [[if a.kind == "input" or a.kind == "param" then]],
    new = [[if a.kind == "input" then]],
    specs = { "hash_inputs" }, env = { KREACH_DEVICE = "host" } },
  { id = "store_hash_last_byte", file = "runtime/kr_hash.c",
    what = "the store's content hash leaves out the last byte",
    old = "XXH3_128bits(data, n)",
    new = "XXH3_128bits(data, n ? n - 1 : 0)",
    ctest = { name = "hash", srcs = { "tests/c/test_hash.c", "runtime/kr_hash.c" } } },
  -- issue 34, item 5: the lint's rules in every import form (tests/lua/kbcandidate_spec.lua)
  { id = "kb_from_import_unchecked", file = "scripts/kreach/candidate/pylint.lua",
    what = "the lint does not check the names of `from x import y`",
    old = "                    rule = imported_rule(n, a.name, mod)",
    new = "                    rule = None",
    specs = { "kbcandidate" } },
  { id = "kb_star_import", file = "scripts/kreach/candidate/pylint.lua",
    what = "the lint lets `from x import *` through",
    old = [[if a.name == "*":]],
    new = [[if False:]],
    specs = { "kbcandidate" } },
  { id = "kb_stream_attribute_only", file = "scripts/kreach/candidate/pylint.lua",
    what = "the stream rule refuses only the attribute form (`from torch.cuda import Stream` passes)",
    old = [[if w in C["stream"]: return "stream"]],
    new = [[if w in C["stream"] and mod is None: return "stream"]],
    specs = { "kbcandidate" } },
  { id = "kb_path_last_part", file = "scripts/kreach/candidate/pylint.lua",
    what = "the lint skips the last part of a module path (`import torch.cuda.Stream`)",
    old = "for i in range(1, len(parts)):",
    new = "for i in range(1, len(parts) - 1):",
    specs = { "kbcandidate" } },
  { id = "kb_enum_bltns", file = "scripts/kreach/candidate/pylint.lua",
    what = "the lint lets enum.bltns (the builtins) through",
    old = [["fx", "bltns" }]],
    new = [["fx" }]],
    specs = { "kbcandidate" } },
}
-- issue 34, item 4: one mutant in each size-selected operator variant that the host values
-- checks reach (tests/lua/variants_mutants.lua, tests/lua/variants_values_spec.lua)
do
  local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/tools/[^/]*$") or "."
  for _, m in ipairs(dofile(here .. "/tests/lua/variants_mutants.lua")) do MUTANTS[#MUTANTS + 1] = m end
end

local quote = require("kreach.text").shell_quote
local function sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local ok = p:close()
  return ok and true or false, out
end
local function slurp(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end
local function spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- ---- arguments ----
local as_json, keep, only, whole, build_dir, jobs = false, false, {}, false, nil, nil
local i = 1
while i <= #arg do
  local a = arg[i]
  if a == "--json" then as_json = true
  elseif a == "--keep" then keep = true
  elseif a == "--whole-suite" then whole = true
  elseif a == "--build" or a == "-j" then
    local v = arg[i + 1]
    if not v then io.stderr:write("mutate: ", a, " needs a value\n"); os.exit(2) end
    if a == "-j" then
      jobs = math.tointeger(tonumber(v))
      if not jobs or jobs < 1 then io.stderr:write("mutate: -j needs a positive whole number, not ", v, "\n"); os.exit(2) end
    else build_dir = v end
    i = i + 1
  elseif a == "-h" or a == "--help" then
    io.write("usage: build/kreach tools/mutate.lua [--json] [--keep] [--whole-suite [--build DIR] [-j N]] [ID ...]\nmutants:\n")
    for _, m in ipairs(MUTANTS) do io.write(("  %-26s %s\n"):format(m.id, m.what)) end
    os.exit(0)
  elseif a:sub(1, 1) == "-" then io.stderr:write("mutate: unknown option ", a, "\n"); os.exit(2)
  else only[a] = true end
  i = i + 1
end
if (build_dir or jobs) and not whole then io.stderr:write("mutate: --build and -j go with --whole-suite\n"); os.exit(2) end
local list = {}
local selecting = next(only) ~= nil
for _, m in ipairs(MUTANTS) do if not selecting or only[m.id] then list[#list + 1] = m; only[m.id] = nil end end
if next(only) then io.stderr:write("mutate: no mutant named ", (next(only)), "\n"); os.exit(2) end

-- the source tree: this script's directory's parent
local root = (debug.getinfo(1, "S").source:sub(2):match("^(.*)/tools/[^/]*$")) or "."
local _, absroot = sh("cd " .. quote(root) .. " && pwd")
root = absroot:gsub("%s+$", "")
local bin = kreach.executable()
local started = os.time()
local tmp = assert(output.tmpdir())
-- progress, on stderr (with --json too: the JSON is on stdout)
local function say(fmt, ...) io.stderr:write(fmt:format(...)) end
-- stops with status 2 and a message, leaving no temporary directory behind
local function stop(fmt, ...)
  io.stderr:write("mutate: ", fmt:format(...), "\n")
  output.remove_tree(tmp)
  os.exit(2)
end

-- run one mutant's tests against the Lua directory `luadir` (or, for a C test, compile against
-- the sources given) -> caught (true when some test failed), the output's tail, seconds
local function run_tests(m, luadir, csrcs)
  local t0 = os.time()
  if m.ctest then
    local exe = tmp .. "/test_" .. m.ctest.name
    local srcs = {}
    for _, s in ipairs(csrcs) do srcs[#srcs + 1] = quote(s) end
    local cok, cout = sh(("cc -std=gnu11 -O0 -w -I%s -I%s %s -o %s"):format(quote(root .. "/runtime"),
      quote(root .. "/tests/c"), table.concat(srcs, " "), quote(exe)))
    if not cok then return nil, "the test does not compile:\n" .. cout end
    local rok, rout = sh(quote(exe))
    return not rok, rout:sub(-600), os.time() - t0
  end
  local failed, tail = false, ""
  for _, spec in ipairs(m.specs) do
    local env = {}
    for k, v in pairs(m.env or {}) do env[#env + 1] = ("%s=%s"):format(k, quote(v)) end
    table.sort(env)
    local rok, rout = sh(("cd %s && %s KREACH_LUA_DIR=%s %s tests/lua/runner.lua tests/lua/%s_spec.lua"):format(
      quote(root), table.concat(env, " "), quote(luadir), quote(bin), spec))
    if not rok then failed = true; tail = tail .. rout:sub(-600) end
  end
  return failed, tail, os.time() - t0
end

-- the whole CPU suite (ctest, label gpu left out) against the Lua directory `luadir` -> caught
-- (true when some test failed), the names of the tests that failed, the output's tail. Stops at
-- the first failure: one is enough to catch a mutant.
local function run_suite(luadir)
  local ok, out = sh(("cd %s && KREACH_LUA_DIR=%s ctest -LE gpu -j %d --stop-on-failure"):format(
    quote(build_dir), quote(luadir), jobs))
  local failed = {}
  for name in out:gmatch("\n%s*%d+ %- (%S+) %(") do failed[#failed + 1] = name end
  if not ok and #failed == 0 then return nil, {}, "ctest did not run the suite:\n" .. out:sub(-600) end
  if ok and not out:find("100%% tests passed") then return nil, {}, "ctest ran no test:\n" .. out:sub(-600) end
  return not ok, failed, out:sub(-600)
end

if whole then
  build_dir = build_dir or (root .. "/build")
  if not build_dir:find("^/") then
    local _, cwd = sh("pwd")
    build_dir = cwd:gsub("%s+$", "") .. "/" .. build_dir
  end
  local f = io.open(build_dir .. "/CTestTestfile.cmake", "rb")
  if not f then stop("--whole-suite: %s is not a configured build tree (no CTestTestfile.cmake)", build_dir) end
  f:close()
  if not jobs then
    local _, n = sh("nproc")
    jobs = math.tointeger(tonumber((n:gsub("%s+$", "")))) or 2
  end
  say("the whole CPU suite, unmutated (%s, -j %d) ...\n", build_dir, jobs)
  local t0 = os.time()
  local failed, names, tail = run_suite(root .. "/scripts")
  if failed ~= false then
    stop("the whole suite fails on the unmutated code (%s); fix it first:\n%s", table.concat(names, ", "), tail)
  end
  say("  passes (%d s)\n", os.time() - t0)
end

-- the unmutated code must pass every test used
local baseline_dir = root .. "/scripts"
local seen = {}
for _, m in ipairs(list) do
  local envk = {}
  for k, v in pairs(m.env or {}) do envk[#envk + 1] = k .. "=" .. v end
  table.sort(envk)
  local key = m.ctest and ("c:" .. m.ctest.name) or (table.concat(m.specs, ",") .. " " .. table.concat(envk, " "))
  if not seen[key] then
    seen[key] = true
    local srcs
    if m.ctest then srcs = {}; for i, s in ipairs(m.ctest.srcs) do srcs[i] = root .. "/" .. s end end
    local failed, tail = run_tests(m, baseline_dir, srcs)
    if failed ~= false then
      stop("the tests of %s fail on the unmutated code; fix them first:\n%s", m.id, tostring(tail))
    end
  end
end

local results, survived = {}, 0
for _, m in ipairs(list) do
  local src = slurp(root .. "/" .. m.file)
  local s, e
  if src then s, e = src:find(m.old, 1, true) end
  if not s then
    stop("%s: '%s' is no longer in %s; update the mutant", m.id, m.old, m.file)
  end
  if src:find(m.old, e + 1, true) then
    stop("%s: '%s' is in %s more than once; make it unique", m.id, m.old, m.file)
  end
  local mutated = src:sub(1, s - 1) .. m.new .. src:sub(e + 1)
  local dir = tmp .. "/" .. m.id
  local caught, tail, secs, caught_by
  if m.ctest then
    sh("mkdir -p " .. quote(dir))
    local srcs = {}
    for i, f in ipairs(m.ctest.srcs) do
      if f == m.file then
        srcs[i] = dir .. "/" .. f:match("[^/]+$")
        spit(srcs[i], mutated)
      else
        srcs[i] = root .. "/" .. f
      end
    end
    caught, tail, secs = run_tests(m, nil, srcs)
  else
    sh(("mkdir -p %s && cp -r %s %s"):format(quote(dir), quote(root .. "/scripts/kreach"), quote(dir .. "/")))
    spit(dir .. "/" .. m.file:gsub("^scripts/", ""), mutated)
    caught, tail, secs = run_tests(m, dir, nil)
    if whole and caught then
      caught_by = {}
      for _, spec in ipairs(m.specs) do caught_by[#caught_by + 1] = "kreach.lua." .. spec end
    elseif whole and caught == false then
      -- the named specs passed: the rest of the suite decides
      local t0 = os.time()
      local names
      caught, names, tail = run_suite(dir)
      secs = secs + (os.time() - t0)
      caught_by = names
    end
  end
  if caught == nil then
    stop("%s: %s", m.id, tail)
  end
  if not caught then survived = survived + 1 end
  results[#results + 1] = { id = m.id, what = m.what, file = m.file, caught = caught, seconds = secs,
                            tests = m.ctest and { "kreach.c." .. m.ctest.name } or m.specs,
                            caught_by = caught_by }
  say("%-26s %-8s %3d s  %s%s\n", m.id, caught and "caught" or "SURVIVED", secs, m.what,
    (caught_by and #caught_by > 0) and (" [" .. table.concat(caught_by, ", ") .. "]") or "")
end
if not keep then output.remove_tree(tmp) else say("mutants kept in %s\n", tmp) end

if as_json then
  io.write(json.encode({ mutants = results, caught = #results - survived, survived = survived,
                         mode = whole and "whole-suite" or "named-specs", seconds = os.time() - started }), "\n")
else
  io.write(("%d of %d mutants caught%s (%s, %d s)\n"):format(#results - survived, #results,
    survived > 0 and ", the others survive" or "", whole and "the whole CPU suite" or "the named specs",
    os.time() - started))
end
os.exit(survived == 0 and 0 or 1)
