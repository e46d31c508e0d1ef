# kreach profile's first word: import, report and list are its forms; anything else is a program
# to run (docs/profiling.md, "Commands"). A mistyped form is a usage error with a suggestion, not
# a program run under the profiler: a first word not after "--", that is no file and no command
# on PATH, and is within 2 edits of a form.
$ kreach profile imprt trace.json
? 2
= kreach profile: 'imprt' is not a form of kreach profile nor a program on PATH: did you mean 'import'? (run a program as kreach profile -- <command...>)
$ kreach profile reprot 3
? 2
~ did you mean 'report'%?
$ kreach profile lst
? 2
~ did you mean 'list'%?
$ { kreach profile imprt trace.json --json 2>/dev/null; echo "status $?" >&2; } | kreach -e 'local v = require("cjson").decode(io.read("a")); print(v.kind, math.tointeger(v.status), v.error:match("did you mean .import.%?") ~= nil)'
= status 2
= usage	2	true
# after "--" the words are a program, whatever they are called: run, not refused as usage (it
# needs a GPU, status 77 without one; with one it fails as a program that does not exist)
$ kreach profile --no-store -- imprt trace.json; test $? -ne 2 && echo not-usage
= not-usage
! did you mean
# a word far from every form, or one that names a program on PATH or a file here, is run as before
$ kreach profile --no-store kreach-no-such-program; test $? -ne 2 && echo not-usage
= not-usage
! did you mean
$ d=$(mktemp -d) && printf '#!/bin/sh\nexit 0\n' > $d/imprt && chmod +x $d/imprt && PATH=$d:$PATH kreach profile --no-store imprt; test $? -ne 2 && echo not-usage
= not-usage
! did you mean
$ K=$(command -v kreach) && K=$(cd "$(dirname "$K")" && pwd)/kreach && d=$(mktemp -d) && cd $d && printf '#!/bin/sh\nexit 0\n' > lst && chmod +x lst && "$K" profile --no-store lst; test $? -ne 2 && echo not-usage
= not-usage
! did you mean
