# kreach list fits 100 columns (issue 35): a name or inputs too long for its column is cut with
# "...", a suite's description wraps under itself; --json keeps everything whole.
$ kreach list | awk 'length($0) > 100' | wc -l
= 0
$ kreach list
~ ^dlrm%-bench +12 problems  DLRM%-Bench: 12 recommender kernel problems %(embeddings,$
~ ^ +interaction, MLPs, optimiser%)$
~ ^kernelbench%-l1%-repr +18 problems  KernelBench level 1, upstream's 18%-problem representative subset$
$ for s in kernelbench-l1 kernelbench-l1-conv kernelbench-l1-repr dlrm-bench dlrm-bench-variants; do kreach list $s; done | awk 'length($0) > 100' | wc -l
= 0
$ kreach list kernelbench-l1
~ ^  id  name +category +GB  inputs$
~ ^  19  19_ReLU +activation +12%.885  4096x393216$
~ ^  73  73_conv_transposed_3D_asym%.%.%. convolution/transposed 3D +1%.179  4x32x32x64x128$
~ ^  97  97_ScaledDotProductAttention +attention +8%.590  32x32x512x1024; 32x32x512%.%.%.$
$ kreach list kernelbench-l1 --json
~ "name":"73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped"
~ "inputs":"32x32x512x1024; 32x32x512x1024; 32x32x512x1024"
$ kreach list dlrm-bench
~ ^   1  1_EmbeddingBag_onehot_26_%.%.%. embedding/bag +0%.007  2048; 2048; .*%.%.%.$
$ kreach list dlrm-bench --json
~ "inputs":"2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048; 2048"
# a name is cut, but its id (or any unique part of the name) still names it
$ kreach show 73_conv_transposed_3D_asymmetric_input_square
~ ^73_conv_transposed_3D_asymmetric_input_square_kernel__strided_padded__grouped %(convolution/transposed 3D, problem 73
