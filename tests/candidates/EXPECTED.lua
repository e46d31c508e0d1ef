-- The expected verdict of every test candidate under `kreach check <problem> <candidate>`.
--
-- A list of entries, each one check to run:
--   file         the candidate, relative to tests/candidates/
--   problem      the KernelBench level-1 problem id (problems/kernelbench/level1/NNN_*.lua)
--   sizes        size overrides (`--size name=value`); nil: the problem's shipped sizes
--   dtype        the problem's dtype (`--dtype`); nil: f32
--   verdict      the expected verdict: correct, incorrect, compile_error, runtime_error,
--                timeout or invalid_candidate
--   reasons      for incorrect only: the reasons that are acceptable (any one of them)
--   detail_match for runtime_error only, optional: a Lua pattern the verdict's text must match
--   repeats      for correct only: how many times to run the whole check (all must pass)
-- A file may appear more than once (other sizes). The small sizes are deliberately not
-- multiples of 4 or of the block sizes, to exercise the tails; inputs stay within a few MB, so
-- the list runs in well under a minute (the two shipped-size entries aside).
return {
  -- correct candidates
  { file = "019_relu.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "correct", repeats = 10 },
  { file = "019_relu.lua", problem = 19, sizes = nil, verdict = "correct", repeats = 2 },
  { file = "../../examples/023_softmax_online.lua", problem = 23, sizes = { batch_size = 65, dim = 5003 }, verdict = "correct", repeats = 10 },
  { file = "../../examples/023_softmax_online.lua", problem = 23, sizes = { batch_size = 129, dim = 7 }, verdict = "correct", repeats = 10 },
  { file = "../../examples/023_softmax_online.lua", problem = 23, sizes = nil, verdict = "correct", repeats = 2 },
  { file = "047_sum_dim.lua", problem = 47, sizes = { batch_size = 16, dim1 = 257, dim2 = 255 }, verdict = "correct", repeats = 10 },
  { file = "094_mse_atomic.lua", problem = 94, sizes = { batch_size = 129, input_size = 1001 }, verdict = "correct", repeats = 10 },
  { file = "../../examples/001_matmul_tiled.lua", problem = 1, sizes = { N = 257 }, verdict = "correct", repeats = 10 },
  { file = "../../examples/001_matmul_tiled.lua", problem = 1, sizes = { N = 100 }, verdict = "correct", repeats = 10 },
  { file = "012_diag_matmul.lua", problem = 12, sizes = { N = 257, M = 1001 }, verdict = "correct", repeats = 10 },
  -- M a multiple of 4: the float4 kernel
  { file = "012_diag_matmul.lua", problem = 12, sizes = { N = 255, M = 1028 }, verdict = "correct", repeats = 10 },

  -- adversarial candidates
  { file = "adv_zeros.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "incorrect", reasons = { "wrong_values" } },
  { file = "adv_partial.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "incorrect", reasons = { "incomplete_write" } },
  -- one element unwritten of 262336; the last element (n % 4 = 1) and the last three (n % 4 = 3)
  { file = "adv_skip_one.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "incorrect", reasons = { "incomplete_write" } },
  { file = "adv_no_tail.lua", problem = 19, sizes = { batch_size = 63, dim = 4099 }, verdict = "incorrect", reasons = { "incomplete_write" } },
  { file = "adv_no_tail.lua", problem = 19, sizes = { batch_size = 61, dim = 4099 }, verdict = "incorrect", reasons = { "incomplete_write" } },
  { file = "adv_nan.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "incorrect", reasons = { "non_finite" } },
  { file = "adv_mutation.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "incorrect", reasons = { "input_mutation" } },
  { file = "adv_race.lua", problem = 47, sizes = { batch_size = 16, dim1 = 257, dim2 = 255 }, verdict = "incorrect", reasons = { "wrong_values", "nondeterministic" } },
  { file = "adv_nondeterministic.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "incorrect", reasons = { "nondeterministic" } },
  { file = "adv_oob_write.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "runtime_error", detail_match = "out%-of%-bounds" },
  { file = "adv_illegal_address.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "runtime_error", detail_match = "illegal" },
  { file = "adv_gpu_hang.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "timeout" },
  { file = "adv_compile_error.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "compile_error" },
  { file = "adv_forbidden.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "adv_malformed.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "adv_constant.lua", problem = 48, sizes = { batch_size = 16, dim1 = 257, dim2 = 255 }, verdict = "incorrect", reasons = { "wrong_values", "trivial_output" } },
  -- adversarial for timing: right on every call the correctness protocol makes, so check
  -- passes them; kreach eval judges the last timed call again and rejects them
  -- (tests/lua/gpu/measure_spec.lua)
  { file = "adv_warmup.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "correct" },
  { file = "adv_replay.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "correct" },
  -- adversarial for timing, on a compute-bound problem: memos that the correctness protocol's
  -- calls never let reuse anything, so check passes them; kreach eval's timed calls rotate
  -- over input sets with new values every round and poison every output first, so the pointer
  -- memo and the call counter are incorrect there, found while timing, and the memo on
  -- sampled values and the result cache compute every timed call (tests/lua/gpu/timing_spec.lua)
  { file = "adv_memo_pointer.lua", problem = 1, sizes = { N = 257 }, verdict = "correct" },
  { file = "adv_memo_sampled.lua", problem = 1, sizes = { N = 257 }, verdict = "correct" },
  { file = "adv_memo_count.lua", problem = 1, sizes = { N = 257 }, verdict = "correct" },
  { file = "adv_memo_cache.lua", problem = 1, sizes = { N = 257 }, verdict = "correct" },
  -- copies the baseline's output where the timing worker allocates it; computes in the check
  -- (its outputs there are views into guarded allocations): tests/lua/gpu/timing_spec.lua
  { file = "adv_copy_baseline.lua", problem = 1, sizes = { N = 257 }, verdict = "correct" },
  { file = "adv_statistic.lua", problem = 6, dtype = "bf16", sizes = { M = 16, N = 16, K = 16384 }, verdict = "incorrect", reasons = { "trivial_output" } },
  -- reaching for the host's files through the preprocessor (docs/candidates.md, "The seal"):
  -- refused by the source check in the sealed worker, before NVRTC sees the source
  { file = "bad_include_environ.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_include_passwd.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_include_macro.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_has_include.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_include_array.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_control_chars.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  -- what the source check missed before issue 33 (H1: a word of Thrust's computed #include
  -- names defined; H2: an #include after a comment that spans lines; H3: __has_include through
  -- the toolkit's _CCCL_PP_CAT and _CCCL_HAS_INCLUDE): tests/cli/seal_compile.t
  { file = "bad_h1_thrust_word.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_h2_comment_line.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_h3_cccl_cat.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_h3_cccl_has_include.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  -- launches a real launch refuses, and so kreach lint's dry run (tests/cli/lint_launch.t):
  -- the GPU's verdict is the same invalid_candidate
  { file = "bad_block.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_launch_key.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_shared.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_bounds.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_scratch.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_scratch_dtype.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
}
