# Problem names are forgiving (issue 35): any case, a unique prefix or suffix, "did you mean"
# for a misspelt one, and an ambiguous one is a usage error that lists the candidates. Ids and
# exact names behave as before.
$ kreach show relu
~ ^19_ReLU %(activation, problem 19 of kernelbench%-l1%)
$ kreach show RELU
~ ^19_ReLU %(activation, problem 19 of kernelbench%-l1%)
$ kreach show 3_Batched
~ ^3_Batched_matrix_multiplication %(matmul, problem 3 of kernelbench%-l1%)
$ kreach show 3_batched
~ ^3_Batched_matrix_multiplication %(matmul, problem 3 of kernelbench%-l1%)
$ kreach show leakyrelu
~ ^20_LeakyReLU
$ kreach show hingel
~ ^100_HingeLoss
$ kreach show dotinteraction_backward
~ ^8_DotInteraction_backward %(embedding/interaction grad, problem 8 of dlrm%-bench%)
$ kreach show dlrm-bench/rowwiseadagrad
~ ^6_RowwiseAdagrad
# a suffix: the end of the name
$ kreach show _reverse
~ ^91_cumsum_reverse
# ambiguous: every candidate is named, and nothing is shown
$ kreach show hard
? 2
= kreach show: 'hard' could be 2 problems: 28_HardSigmoid, 32_HardTanh (type more of the name)
! ^28_HardSigmoid %(
$ kreach show conv_standard
? 2
= kreach show: 'conv_standard' could be 12 problems: 50_conv_standard_2D__square_input__square_kernel, 54_conv_standard_3D__square_input__square_kernel, 55_conv_standard_2D__asymmetric_input__square_kernel, 56_conv_standard_2D__asymmetric_input__asymmetric_kernel, 59_conv_standard_3D__asymmetric_input__square_kernel, 60_conv_standard_3D__square_input__asymmetric_kernel, 62_conv_standard_2D__square_input__asymmetric_kernel, 63_conv_standard_2D__square_input__square_kernel, and 4 more (type more of the name)
# the whole name first: softmax is 23_Softmax, not also 24_LogSoftmax
$ kreach show softmax
~ ^23_Softmax
$ kreach show dlrm-bench/dot
? 2
= kreach show: 'dot' could be 2 problems of dlrm-bench: 7_DotInteraction, 8_DotInteraction_backward (type more of the name)
# misspelt: did you mean
$ kreach show reul
? 2
= kreach show: no problem 'reul' (a path, an id or a name from a suite): did you mean '19_ReLU'?
$ kreach show dlrm-bench/botommlp
? 2
= kreach show: no problem 'botommlp' in the suite dlrm-bench (kreach list dlrm-bench): did you mean '10_BottomMLP'?
# every command that takes a problem goes through the same lookup
$ kreach export swish -o $(mktemp -d) && echo exported
= exported
$ kreach lint relu tests/candidates/019_relu.lua --size batch_size=3 --size dim=1001
~ ^tests/candidates/019_relu%.lua: ok
# ids and exact names as before; a number never matches part of a name
$ kreach show 3
~ ^3_Batched_matrix_multiplication
$ kreach show 019_ReLU
~ ^19_ReLU
$ kreach show 101
? 2
= kreach show: no problem '101' (a path, an id or a name from a suite)
$ kreach show 3d_tensor
~ ^10_3D_tensor_matrix_multiplication
