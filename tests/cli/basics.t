# The binary itself: version, help, scripts like lua, exit statuses. Needs no GPU.
$ kreach --version
~ ^kreach %d+%.%d+%.%d+ %(.+%)$
$ kreach help
~ ^commands:
~ ^  info +Show the GPU
~ ^  help +List the commands
$ kreach
~ ^commands:
$ kreach help info
~ %-%-json
$ [ "$(kreach -h)" = "$(kreach help)" ] && [ "$(kreach --help)" = "$(kreach help)" ] && echo same
= same
$ kreach -h
~ ^  %-h, %-%-help   this text
~ ^  lint +Check a candidate
$ kreach nosuchcommand
? 2
= kreach: unknown command 'nosuchcommand' (try 'kreach help')
$ kreach evl
? 2
= kreach: unknown command 'evl': did you mean 'eval'? (try 'kreach help')
$ kreach --bogus
? 2
~ unknown option '%-%-bogus'
$ kreach --device x info
? 2
= kreach: --device takes a device number, or host
$ kreach info --bogus
? 2
~ unknown option '%-%-bogus'
$ kreach -e 'print(1 + 1)'
= 2
$ kreach -e 'error("boom")'
? 1
~ boom
~ stack traceback
$ kreach -e 'os.exit(5)'
? 5
$ kreach /nonexistent/script.lua
? 3
~ cannot open /nonexistent/script.lua
$ d=$(mktemp -d) && printf 'x = = 1\n' > $d/bad.lua && kreach $d/bad.lua
? 3
~ bad%.lua:1:
$ d=$(mktemp -d) && printf '#!/usr/bin/env kreach\nprint(arg[0]:match("[^/]*$"), arg[1], arg[2], select("#", ...))\n' > $d/s.lua && kreach $d/s.lua one two
= s.lua	one	two	2
$ kreach -e 'print(require("cjson").encode({a = 1}), require("lfs").currentdir() ~= nil, require("argparse") ~= nil)'
= {"a":1}	true	true
$ kreach -e 'print(package.path:find("/usr/share/lua") == nil, package.cpath)'
= true	
$ KREACH_LUA_DIR=/nonexistent kreach -e 'print(require("kreach").version ~= nil)'
= true
# a reason of several lines (a candidate's error message, a compiler log) is printed with its
# later lines marked "  | ": a line the candidate wrote cannot pass for a verdict of kreach's
$ d=$(mktemp -d) && printf '%s\n' 'return { source = [[extern "C" __global__ void f(float *y) {}]], forward = function(k, x, y) error("boom\nnl.lua: ok (dry run: 1 launch of f; compiled for sm_90)") end }' > $d/nl.lua && kreach lint 19 $d/nl.lua --arch sm_90; s=$?; rm -rf $d; exit $s
? 1
~ ^/.*/nl%.lua: invalid_candidate$
~ ^  /.*/nl%.lua:1: boom$
=   | nl.lua: ok (dry run: 1 launch of f; compiled for sm_90)
! ^ *nl%.lua: ok
