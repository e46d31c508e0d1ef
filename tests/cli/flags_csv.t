# issue 35: kreach profile's report format is --format text|json|csv, as kreach results export's
# is --format; --csv (documented before) still works and says on stderr that it is deprecated; a
# trace's format is --trace-format (--format auto|kreach|kineto|nsys still means it). No GPU.
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --steps step --format csv
= section,name,family,addressable,count,time_s,mean_s,frac_gpu,frac_wall,speedup
! deprecated
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --steps step --csv 2>/dev/null
= section,name,family,addressable,count,time_s,mean_s,frac_gpu,frac_wall,speedup
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --steps step --csv 2>&1 >/dev/null
= kreach profile: warning: --csv is deprecated; use --format csv
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --format json | kreach -e 'local r = require("cjson").decode(io.read("a")); print(("%d"):format(r.totals.kernels))'
= 6
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --format text
~ ^profile: cupti trace
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --json --format csv
? 2
~ %-%-json and %-%-format csv: give one
$ D=$(mktemp -d) && kreach -e 'assert(require("kreach.results.store").open(arg[1])):close()' $D/p.db && kreach profile list --db $D/p.db --format csv
? 2
~ %-%-format csv applies to a report
# the trace's format: --trace-format, and --format with a trace format as before
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --trace-format kineto
? 3
~ not JSON
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --format kineto
? 3
~ not JSON
$ kreach profile import tests/data/profile/kreach_small.jsonl --no-store --format kineto --trace-format nsys
? 2
~ give the trace's format once, as %-%-trace%-format
$ kreach profile --trace-format kineto -- true
? 2
~ %-%-trace%-format applies to import and report
