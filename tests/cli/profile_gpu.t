# gpu: kreach profile runs CUDA programs under the injection library (libkreach_inject.so).
$ d=$(mktemp -d) && kreach profile -o $d/t.jsonl --db $d/r.db --workload smoke -- kreach -e 'local k = require "kreach"; local x = k.zeros({ 1 << 20 }); for i = 1, 3 do x:fill(i) end; k.synchronize()' && test -s $d/t.jsonl && echo kept
~ ^profile: cupti trace .*/t%.jsonl$
~ ^command: kreach %-e .* %(exit status 0, ran [%d.]+ s%)$
= workload: smoke
~ ; [1-9]%d* kernels, %d+ memory operations
~ ^GPU busy: 
~ ^stored: profile 1 in /.*/r%.db$
= kept
$ kreach profile --no-store --json -- kreach -e 'local f = assert(io.open(os.getenv("KREACH_PROFILE_KNOBS"), "w")); f:write([[{"n": 3, "mode": "fast"}]]); f:close(); require("kreach").zeros({ 64 }); require("kreach").synchronize(); print("to stderr")' | kreach -e 'local r = require("cjson").decode(io.read("a")); print(("%d"):format(r.knobs.n), r.knobs.mode, r.totals.kernels > 0)'
= 3	fast	true
$ kreach profile --no-store -- kreach -e 'require("kreach").zeros({ 64 }); require("kreach").synchronize(); os.exit(3)'
? 1
~ ^command: kreach %-e .* %(exit status 3, ran
= kreach profile: the program exited with status 3
$ d=$(mktemp -d) && touch $d/t.jsonl && kreach profile --no-store -o $d/t.jsonl -- true
? 1
~ exists %(a trace is never overwritten%)
$ KREACH_TRACE_KINDS='kernel, marker' kreach profile --no-store -- kreach -e 'local k = require "kreach"; local x = k.zeros({ 1 << 20 }); x:fill(2); k.synchronize()'
~ ; [1-9]%d* kernels, 0 memory operations
= note: memcpy, memset not traced (KREACH_TRACE_KINDS): the report leaves them out
$ kreach profile --no-store --steps step --alternate -- "$(dirname "$(command -v kreach)")/tests/inject_target"
~ ^window: 5 of 5 'step' ranges %(0 skipped, 3 traced%); wall [%d.]+ [mu]s; 15 kernels, 0 memory operations$
~ ^alternate: kernels and memory operations traced in every other 'step' range only %(the 1st, 3rd%.%.%.%): the totals and shares are over the 3 traced steps$
~ ^  tracing slowed a step by [-+][%d.]+%% %(the median over 2 untraced steps
