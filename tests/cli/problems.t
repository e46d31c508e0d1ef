# The problem commands that need no GPU: list, show, export; their errors and exit statuses.
$ kreach list
~ ^kernelbench%-l1 +100 problems  KernelBench level 1
~ ^kernelbench%-l1%-repr +18 problems  KernelBench level 1
~ ^dlrm%-bench +%d+ problems
! ^kernelbench.*to come
$ kreach list kernelbench-l1
~ ^  19  19_ReLU +activation +12%.885  4096x393216$
~ ^  73  73_conv_transposed_3D_asym%.%.%. +convolution/transposed 3D +1%.179
~ ^ 100  100_HingeLoss
! ^to come
$ kreach list kernelbench-l1 --json
~ "pending":[%[{][%]}]
$ kreach list nosuchsuite
? 2
~ no suite 'nosuchsuite' %(suites: dlrm%-bench, dlrm%-bench%-variants, kernelbench%-l1, kernelbench%-l1%-conv, kernelbench%-l1%-repr%)
# a suite's problem as <suite>/<id>; dlrm-bench's ids are not bare (3 is KernelBench's 3)
$ kreach show kernelbench-l1/19
~ ^19_ReLU %(activation, problem 19 of kernelbench%-l1%)
$ kreach show 3
~ ^3_Batched_matrix_multiplication %(matmul, problem 3 of kernelbench%-l1%)
$ kreach show kernelbench-l1/101
? 2
= kreach show: no problem '101' in the suite kernelbench-l1 (kreach list kernelbench-l1)
$ kreach show nosuite/3
? 3
~ nosuite/3: cannot read the problem: no such file
$ kreach show 12
~ ^12_Matmul_with_diagonal_matrices_ %(matmul, problem 12 of kernelbench%-l1%)
~ ^  input   A +f32   {4096}
~ ^bytes %(compulsory traffic%): 134234112
~ A%.unsqueeze%(1%) %* B
$ kreach show 19_ReLU --dtype bf16 --size dim=1024
~ ^  input   x +bf16  {4096, 1024}
$ kreach show 19 --size nope=3
? 2
~ no size named 'nope'
$ kreach show 19 --size dim
? 2
= kreach show: --size takes name=value, got 'dim'
$ kreach show nosuchproblem
? 2
~ no problem 'nosuchproblem'
$ kreach show 23 --json
~ "name":"23_Softmax"
$ d=$(mktemp -d) && kreach export --format kernelbench kernelbench-l1 -o $d > /dev/null && ls $d | wc -l
= 100
$ d=$(mktemp -d) && kreach export 5 -o $d --dtype bf16 && cat $d/5_Matrix_scalar_multiplication.py
~ ^s = 3%.14
~ ^    A = torch%.rand%(%(M, N%)%)%.to%(torch%.bfloat16%)
~ ^    return %[A, s%]
~ ^def get_init_inputs%(%):
$ kreach export 5
? 2
~ %-o DIR is required
$ d=$(mktemp -d) && printf 'return 1\n' > $d/bad.lua && kreach show $d/bad.lua
? 3
~ bad%.lua: the file must return kreach%.problem
$ kreach lint 19 tests/candidates/019_relu.lua --size batch_size=3 --size dim=1001
~ ^tests/candidates/019_relu%.lua: ok %(dry run: 2 launches of relu4, relu_tail; compiled for sm_%d+%)
$ kreach lint 19 tests/candidates/bad_io.lua
? 1
~ ^tests/candidates/bad_io%.lua: invalid_candidate
~ bad_io%.lua:5: attempt to index a nil value %(global 'io'%)
$ kreach lint 19 tests/candidates/bad_compile.lua --json
? 1
~ "verdict":"compile_error"
# the worker's start-up (CUDA, the problem, the seal) is not on the candidate's clock, so a
# short --timeout holds on a loaded machine; 2 s leaves the compile room
$ kreach lint 19 tests/candidates/bad_hang.lua --timeout 2
? 1
~ ^tests/candidates/bad_hang%.lua: timeout
~ phase 'forward' ran past its limit of 2 s
$ kreach help
! worker
# the example candidates pass the lint of their problems (a dry run of forward, and NVRTC for sm_90)
$ for f in examples/*.lua; do id=$(basename $f | sed 's/^0*\([0-9]*\)_.*/\1/'); kreach lint $id $f || exit 1; done
~ 026_gelu_float4%.lua: ok %(dry run: 
$ kreach lint dlrm-bench/1 examples/dlrm-bench/01_embedding_onehot_fused.lua
~ 01_embedding_onehot_fused%.lua: ok %(dry run: 1 launch of gather26; compiled for sm_90%)
$ kreach lint dlrm-bench/7 examples/dlrm-bench/07_dot_interaction_warp.lua
~ 07_dot_interaction_warp%.lua: ok %(dry run: 1 launch of dot_warp; compiled for sm_90%)
$ kreach lint dlrm-bench/12 examples/dlrm-bench/12_preprocess_per_feature.lua
~ 12_preprocess_per_feature%.lua: ok %(dry run: 2 launches of feature_totals, feature_pass; compiled for sm_90%)
$ kreach lint dlrm-bench/5 examples/dlrm-bench/05_backward_counting_sort.lua
~ 05_backward_counting_sort%.lua: ok %(dry run: 6 launches of fill, mark, scan_blocks, scan_sums, place, accumulate; compiled for sm_90%)
