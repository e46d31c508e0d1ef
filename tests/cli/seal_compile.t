# The compile path of a .lua candidate (issue 33, item 9): what the source check refuses that
# it missed before (H1-H3; each of these compiled, and read or probed a host file, under the
# earlier check), and the compile cache's settings reaching the sealed workers (H6). Secrets
# are planted in the environment and must appear nowhere. Needs no GPU.
# H1: a word Thrust builds an #include name from, defined to point it at /etc/passwd
$ KREACH_TEST_SECRET=planted-kreach-secret kreach lint 19 tests/candidates/bad_h1_thrust_word.lua --arch sm_90
? 1
= tests/candidates/bad_h1_thrust_word.lua: invalid_candidate
~ bad_h1_thrust_word%.lua: source line 1: #define cpp is not allowed: Thrust's headers build #include names from this word
! planted
! root:
# H2: an #include after a block comment that spans lines, which NVRTC obeys
$ KREACH_TEST_SECRET=planted-kreach-secret kreach lint 19 tests/candidates/bad_h2_comment_line.lua --arch sm_90
? 1
= tests/candidates/bad_h2_comment_line.lua: invalid_candidate
~ bad_h2_comment_line%.lua: source line 2: #include "/etc/passwd" is not allowed: an absolute path
! root:
# H3: __has_include pasted by the toolkit's _CCCL_PP_CAT, and the toolkit's _CCCL_HAS_INCLUDE
$ kreach lint 19 tests/candidates/bad_h3_cccl_cat.lua --arch sm_90
? 1
= tests/candidates/bad_h3_cccl_cat.lua: invalid_candidate
~ bad_h3_cccl_cat%.lua: source line 2: the identifier '__has_' is not allowed: it is a piece of __has_include
$ kreach lint 19 tests/candidates/bad_h3_cccl_has_include.lua --arch sm_90
? 1
= tests/candidates/bad_h3_cccl_has_include.lua: invalid_candidate
~ bad_h3_cccl_has_include%.lua: source line 2: _CCCL_HAS_INCLUDE%("/etc/shadow"%) is not allowed: an absolute path
# H6: KREACH_CACHE_MAX reaches the worker that compiles: 0 writes no entry (the default writes one)
$ d=$(mktemp -d) && KREACH_CACHE_DIR=$d KREACH_CACHE_MAX=0 kreach lint 19 tests/candidates/019_relu.lua --arch sm_90 >/dev/null && echo "entries: $(find $d -name '*.kcubin' | wc -l)" && KREACH_CACHE_DIR=$d kreach lint 19 tests/candidates/019_relu.lua --arch sm_90 >/dev/null && echo "then: $(find $d -name '*.kcubin' | wc -l)"
= entries: 0
= then: 1
# ... and a value that is not a size is refused before any worker starts, naming the variable
# (it was ignored: 2 GiB), as a usage error
$ d=$(mktemp -d) && KREACH_CACHE_DIR=$d KREACH_CACHE_MAX=2X kreach lint 19 tests/candidates/019_relu.lua --arch sm_90
? 2
~ KREACH_CACHE_MAX='2X' is not a size
! : ok
