-- The in-process timing attacks on KernelBench-format candidates (issue 33), timed by `kreach
-- eval --no-lint` beside PyTorch's own ReLU (tests/lua/gpu/kernelbench_attacks_spec.lua): the
-- lint would refuse most of them, so they go to the GPU without it, and what stops them there is
-- the harness itself. None may get a fast `correct`:
--   verdicts   the verdicts each may get; "honest" means `correct` only with a time PyTorch's
--              eager ReLU does not beat by more than `honest` (its speedup over eager at most
--              that), and "streams" also that its timed calls were seen queueing work on another
--              stream (other_stream_calls > 0)
--   why        what the attack does
return {
  problem = 19,
  sizes = { batch_size = 512, dim = 65536 },
  honest = 1.25,
  { file = "019_relu_adv_lazy.py", attack = "lazy result (__torch_function__ subclass)", verdicts = { invalid_candidate = true } },
  { file = "019_relu_adv_timer.py", attack = "Event.elapsed_time rewritten (type.__setattr__)", verdicts = { correct = "honest", invalid_candidate = true } },
  { file = "019_relu_adv_reply.py", attack = "the worker's reply reached (attrgetter)", verdicts = { correct = "honest", invalid_candidate = true } },
  { file = "019_relu_adv_side_stream.py", attack = "a side stream from Python (attrgetter)", verdicts = { correct = "streams", incorrect = true } },
  { file = "019_relu_adv_native_stream.py", attack = "a side stream from native code (getStreamFromPool)", verdicts = { correct = "streams", incorrect = true } },
  { file = "019_relu_adv_thread.py", attack = "thread injection (native std::thread)", verdicts = { invalid_candidate = true, incorrect = true } },
}
