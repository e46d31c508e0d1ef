# kreach profile without a GPU: importing traces (a PyTorch profiler trace, a kreach JSON Lines
# trace), the report's text, JSON and CSV, storing and reporting a stored profile, and the
# errors. Running a program needs a GPU and the injection library: tests/cli/profile_gpu.t.
$ kreach profile import tests/data/profile/kineto_small.json --no-store
= profile: kineto trace tests/data/profile/kineto_small.json
= device: NVIDIA H100 80GB HBM3
= window: first kernel start to last kernel end; wall 240.000 us; 12 kernels, 0 memory operations
~ ^gemm +no %(vendor%) +3 +60%.000 +48%.0%% +25%.0%%$
~ ^optimizer +yes +1 +10%.000 +8%.0%% +4%.2%%$
= addressable: 32.8% of GPU time, 17.1% of wall time
~ ^unclassified kernels %(no rule matched
~ ^ +1 x +4%.000 us  my_custom_kernel%(float%*, float const%*, int%)$
~ ^kernels in 'other':
! projection
$ kreach profile import tests/data/profile/kineto_small.json --no-store --steps ProfilerStep --skip 1 --speedups elementwise=2,optimizer=1.5 --workload toy --knobs '{"batch": 32, "lr": 0.001}'
= workload: toy
= knobs: batch=32, lr=0.001
= window: 2 of 3 'ProfilerStep' ranges (1 skipped); wall 200.000 us; 8 kernels, 1 memory operations
~ ^GPU busy: 41%.5%% of the wall
= addressable: 25.3% of GPU time, 11.0% of wall time
~ ^projection %(Amdahl%): S = 1 / %(%(1 %- sum_i f_i%) %+ sum_i f_i / s_i%)
~ GPU time:  S = 1 / %(%(1 %- 0%.1724%) %+ 0%.0575/2 %+ 0%.1149/1%.5%) = 1%.0719; 87%.000 us %-> 81%.167 us
~ wall time: S = 1 / %(%(1 %- 0%.0750%) %+ 0%.0250/2 %+ 0%.0500/1%.5%) = 1%.0300
$ kreach profile import tests/data/profile/kineto_small.json --no-store --json | kreach -e 'local r = require("cjson").decode(io.read("a")); print(r.source, ("%d %.4f %.4f"):format(r.totals.kernels, r.addressable.frac_gpu, r.addressable.frac_wall))'
= kineto	12 0.3280 0.1708
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --steps step --csv
= section,name,family,addressable,count,time_s,mean_s,frac_gpu,frac_wall,speedup
~ ^family,gemm,gemm,false,2,4%.0246e%-05,
~ ^kernel,kr_fill_f32,unclassified,,1,1%.234e%-06,
~ ^total,wall,,,,0%.0002,,,1,$
$ kreach profile report tests/data/profile/kreach_small.jsonl --steps step --skip 1 --top 1
= profile: cupti trace tests/data/profile/kreach_small.jsonl
= window: 1 of 2 'step' ranges (1 skipped); wall 100.000 us; 3 kernels, 1 memory operations
= (3 more)
$ kreach help profile
~ kreach profile import <trace>
~ %-%-speedups
$ KREACH_INJECT_LIB=/nonexistent/libkreach_inject.so kreach profile -- true
? 1
= kreach profile: the injection library is missing: /nonexistent/libkreach_inject.so (it is built next to the kreach binary; KREACH_INJECT_LIB names another)
$ kreach profile
? 2
~ nothing to run
$ KREACH_TRACE_KINDS=kernel,kernal kreach profile -- true
? 2
= kreach profile: KREACH_TRACE_KINDS=kernel,kernal: unknown kind 'kernal' (kinds: kernel, memcpy, memset, marker, all)
$ KREACH_TRACE_KINDS='kernel,' kreach profile -- true
? 2
~ an empty kind name
$ KREACH_TRACE_KINDS=kernel kreach profile --steps step -- true
? 2
= kreach profile: --steps needs the program's NVTX ranges, and KREACH_TRACE_KINDS=kernel leaves out 'marker'
$ kreach profile import tests/data/profile/kineto_small.json --steps nosuch
? 1
= kreach profile: no range named 'nosuch' in the trace (its ranges: ProfilerStep, ## forward ##)
$ kreach profile import tests/data/profile/kineto_small.json --speedups gemm=fast
? 2
~ speedups take family=number
$ kreach profile import tests/data/profile/kineto_small.json --speedups elementwize=2
? 2
~ unknown family 'elementwize'
$ kreach profile import tests/data/profile/kineto_small.json --skip 1
? 2
= kreach profile: --skip needs --steps
$ kreach profile --alternate -- true
? 2
= kreach profile: --alternate needs --steps: it traces every other range of that name
$ kreach profile import tests/data/profile/kreach_small.jsonl --steps step --alternate
? 2
= kreach profile: --alternate applies when kreach profile runs a program (a trace says itself whether it alternated)
$ KREACH_TRACE_KINDS=marker kreach profile --steps step --alternate -- true
? 2
= kreach profile: --alternate has nothing to alternate: KREACH_TRACE_KINDS=marker traces only 'marker'
$ kreach profile report tests/data/profile/kreach_alternate.jsonl --no-store
? 1
= kreach profile: the trace traced kernels in every other 'step' range only (KREACH_TRACE_ALTERNATE): measure it over those steps (--steps step)
$ kreach profile report tests/data/profile/kreach_alternate.jsonl --no-store --steps step --skip 1
~ ^window: 5 of 6 'step' ranges %(1 skipped, 2 traced%); wall 2%.400 us; 2 kernels, 0 memory operations$
= alternate: kernels and memory operations traced in every other 'step' range only (the 1st, 3rd...): the totals and shares are over the 2 traced steps
~ ^  tracing slowed a step by %+10%.00%% %(the median over 1 untraced steps
= addressable: 100.0% of GPU time, 8.3% of wall time (9.2% of the untraced steps' wall)
$ d=$(mktemp -d) && kreach profile import tests/data/profile/kineto_small.json --db $d/r.db --steps ProfilerStep --skip 1 --workload toy > $d/out && tail -1 $d/out && kreach profile report 1 --db $d/r.db --speedups elementwise=2 && kreach profile report 2 --db $d/r.db
? 2
~ ^stored: profile 1 in /.*/r%.db$
= workload: toy
= window: 2 of 3 'ProfilerStep' ranges (1 skipped); wall 200.000 us; 8 kernels, 1 memory operations
= addressable: 25.3% of GPU time, 11.0% of wall time
~ GPU time:  S = 1 / %(%(1 %- 0%.0575%) %+ 0%.0575/2%) = 1%.0296
~ ^read: profile 1 of /.*/r%.db$
~ ^kreach profile: no profile 2 in /.*/r%.db$
$ d=$(mktemp -d) && kreach profile report 1 --db $d/nosuch.db
? 3
~ ^kreach profile: /.*/nosuch%.db: no such results database$
$ d=$(mktemp -d) && kreach profile import tests/data/profile/kineto_small.json --db $d
? 3
~ ^kreach profile: cannot store the profile in /[^ ]*: /[^ ]*: not a kreach results database %(it is a directory%)$
$ kreach profile report nosuchfile.json
? 3
= kreach profile: nosuchfile.json: No such file or directory
$ d=$(mktemp -d) && printf '{"type":"header","version":1,"pid":1,"cupti_version":1,"start_ns":0}\n{"type":"kernel","name":"k","end":5}\n' > $d/t.jsonl && kreach profile import $d/t.jsonl --no-store
? 3
~ /t%.jsonl:2: kernel without an integer 'start'$
$ d=$(mktemp -d) && printf '{"type":"header","version":1,"pid":1,"cupti_version":1,"start_ns":0}\n{"type":"kernel","name":"k","start":1,"end":5}\n' > $d/t.jsonl && kreach profile import $d/t.jsonl --no-store
? 1
~ /t%.jsonl:2: no footer: the program did not exit normally
$ d=$(mktemp -d) && printf '{"type":"header","version":1,"pid":1,"cupti_version":1,"start_ns":0}\n{"type":"kernel","name":"k","start":1,"end":5}\n' > $d/t.jsonl && kreach profile import $d/t.jsonl --no-store --allow-partial
~ ^warning: partial trace
$ d=$(mktemp -d) && printf '\037\213\010\000' > $d/t.json.gz && kreach profile import $d/t.json.gz --no-store
? 3
~ gzip%-compressed: kreach reads plain JSON only
