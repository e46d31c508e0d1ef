# gpu: kreach oracle on small sizes: the baseline agrees with the fp64 oracle.
$ kreach oracle 1 --size N=256
~ ^1_Square_matrix_multiplication_ at f32 %(seed 1%)
~ ^  C +relative L2 %d%.%d+e%-0[6-9]
$ kreach oracle 19 --dtype bf16 --size batch_size=64 --size dim=1000
~ ^  y +relative L2 0%.000e%+00
$ kreach oracle 51 --size batch_size=4 --size dim1=64 --size dim2=33 --json
~ "mismatches":0
