-- The KernelBench-format test candidates under `kreach check`, each beside its native .lua
-- equivalent (tests/lua/gpu/kernelbench_candidates_spec.lua): both must get the expected
-- verdict (and one of the reasons, for incorrect).
--   file      the .py candidate, relative to this directory
--   native    its .lua equivalent, relative to tests/candidates/ (nil: none; checked alone)
--   problem   the KernelBench level-1 problem id; sizes: --size overrides
--   verdict, reasons   as in tests/candidates/EXPECTED.lua
--   escapee   the name (/proc/<pid>/comm) of a process the candidate leaves behind: none may
--             be left once the check has ended
return {
  -- correct: a load_inline extension, a Triton kernel, plain PyTorch
  { file = "019_relu_load_inline.py", native = "019_relu.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "correct" },
  { file = "019_relu_triton.py", native = "019_relu.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "correct" },
  { file = "019_relu_torch.py", native = "019_relu.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "correct" },
  -- adversarial
  { file = "023_softmax_zeros.py", native = "adv_zeros.lua", problem = 23, sizes = { batch_size = 65, dim = 5003 }, verdict = "incorrect", reasons = { "wrong_values" } },
  { file = "019_relu_partial.py", native = "adv_partial.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "incorrect", reasons = { "incomplete_write" } },
  { file = "019_relu_mutation.py", native = "adv_mutation.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "incorrect", reasons = { "input_mutation" } },
  -- right values, but its native code leaves a process in a session of its own when its module
  -- loads: the guard finds it (invalid_candidate), and none may be left (escapee: its name)
  { file = "019_relu_escapee.py", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate", escapee = "kr_escapee" },
  { file = "019_relu_build_error.py", native = "adv_compile_error.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "compile_error" },
  -- refused before the GPU (kreach lint's checks), as their native equivalents are refused
  { file = "041_maxpool_arity.py", problem = 41, verdict = "invalid_candidate" },
  { file = "bad_escape.py", native = "adv_forbidden.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_syntax.py", native = "adv_malformed.lua", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_no_model.py", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_worker_reach.py", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  -- the lint as an allow-list (issue 33): a coding declaration that hid code, and the review's
  -- routes through strings, a class pattern, an annotation and loaders
  { file = "bad_lint_coding.py", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
  { file = "bad_lint_reflection.py", problem = 19, sizes = { batch_size = 64, dim = 4099 }, verdict = "invalid_candidate" },
}
