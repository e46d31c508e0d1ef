-- What the two checks of the values against PyTorch share (tests/lua/host_values_spec.lua on
-- the host device, tests/lua/gpu/torch_values_spec.lua on the GPU): the problems at small sizes,
-- the runs (a seed and a distribution of the inputs each), and one run judged and reported.
local oracle = require "kreach.judge.oracle"

local M = {}

M.SUITES = { "kernelbench-l1", "dlrm-bench", "dlrm-bench-variants" }

-- a seed and a distribution of the inputs each: the problem's own, then the check's other two
-- trials' (kreach.problem.other_generator). KernelBench's torch.rand alone is never negative,
-- so it never reaches a hinge's clamp, softsign's |x| or smooth L1's linear branch.
M.RUNS = { { seed = 1, variant = "default" }, { seed = 2, variant = "centred" }, { seed = 3, variant = "shifted" } }

-- small(p, dtype, caps, batch): kreach.judge.oracle.small (the problem at small sizes, and the cap)
function M.small(p, dtype, caps, batch) return oracle.small(p, dtype, { caps = caps, batch = batch }) end

-- at(p, dtype, sizes) -> the problem's instance at small sizes (small's, cap 8 to 64 and a batch
-- of 2) with `sizes` put over them, validated
function M.at(p, dtype, sizes)
  local base = M.small(p, dtype, { 8, 16, 32, 64 }, 2)
  local s = {}
  for k, v in pairs(base.sizes) do if v ~= p.sizes[k] then s[k] = v end end
  for k, v in pairs(sizes or {}) do s[k] = v end
  local inst = p:instantiate{ dtype = dtype, sizes = s }
  inst:validate()
  return inst
end

-- The sizes that reach each size-selected variant of the operators (kreach.ops' header; each
-- family's `variants`), for tests/lua/variants_values_spec.lua: a problem at small sizes with
-- `sizes` put over them (at), run at each of `dtypes` (default f32) with the problem's own
-- inputs, its baseline and oracle against PyTorch, with `limits` (kreach.ops.with_limits) lowered
-- where the path is above a cap no test size reaches. `reaches` names the variants
-- ("family/name") the case is there for: the spec fails when one of them is not taken, and
-- when a declared variant is taken by no case. Sizes sit right above a threshold in one
-- dimension, with the others as small as the problem allows. (The host device has 4 SMs,
-- which sets the thresholds that depend on the device.) python = "sdpa": PyTorch 1.13, which
-- lacks F.scaled_dot_product_attention, is given its math definition (the spec's shim).
M.VARIANT_CASES = {
  -- elementwise: 13 elements, 3 after the f32 packs; row_scale's rows of 8 and 7
  { id = "unary_tail", problem = "kernelbench-l1/19", sizes = { batch_size = 1, dim = 13 },
    reaches = { "elementwise/unary.packs", "elementwise/unary.tail" } },
  { id = "row_scale", problem = "kernelbench-l1/12", sizes = { N = 3, M = 8 }, reaches = { "elementwise/row_scale.packs" } },
  { id = "row_scale_scalar", problem = "kernelbench-l1/12", sizes = { N = 3, M = 7 }, reaches = { "elementwise/row_scale.scalar" } },
  -- matmul: K = 1028, 257 f32 packs (one more than the block), and 1029
  { id = "gemm", problem = "kernelbench-l1/1", sizes = { N = 8 }, reaches = { "matmul/gemm" } },
  { id = "gemv", problem = "kernelbench-l1/4", sizes = { M = 2, K = 1028 }, reaches = { "matmul/gemv.packs", "matmul/gemv.long" } },
  { id = "gemv_scalar", problem = "kernelbench-l1/4", sizes = { M = 2, K = 1029 }, reaches = { "matmul/gemv.scalar", "matmul/gemv.long" } },
  -- reduce over dimension 2 of 3 (inner > 1): R = 512 over 32 columns splits in two on 4 SMs
  { id = "reduce_mid", problem = "kernelbench-l1/47", sizes = { batch_size = 2, dim1 = 8, dim2 = 8, reduce_dim = 1 },
    reaches = { "reduce/mid" } },
  { id = "reduce_mid_split", problem = "kernelbench-l1/47", sizes = { batch_size = 1, dim1 = 512, dim2 = 32, reduce_dim = 1 },
    reaches = { "reduce/mid.split", "reduce/mid.unrolled" } },
  { id = "argmax_mid_split", problem = "kernelbench-l1/51", sizes = { batch_size = 1, dim1 = 512, dim2 = 32, reduce_dim = 1 },
    reaches = { "reduce/mid.split.arg" } },
  -- reduce over the last dimension: 512 (128 f32 packs, 32 threads), 16384 (split in two), 7
  { id = "reduce_row", problem = "kernelbench-l1/47", sizes = { batch_size = 1, dim1 = 1, dim2 = 512, reduce_dim = 2 },
    reaches = { "reduce/row", "reduce/row.unrolled" } },
  { id = "reduce_row_split", problem = "kernelbench-l1/47", sizes = { batch_size = 1, dim1 = 1, dim2 = 16384, reduce_dim = 2 },
    reaches = { "reduce/row.split" } },
  { id = "argmin_row_split", problem = "kernelbench-l1/52", sizes = { batch_size = 1, dim1 = 1, dim2 = 16384, reduce_dim = 2 },
    reaches = { "reduce/row.split.arg" } },
  { id = "reduce_row_unaligned", problem = "kernelbench-l1/47", sizes = { batch_size = 1, dim1 = 3, dim2 = 7, reduce_dim = 2 },
    reaches = { "reduce/row.head", "reduce/row.tail" } },
  -- norm: 256 rows make two waves on 4 SMs; one row of 16384 f32 makes two chunks; 7 is no
  -- whole number of packs; a layer of 129 is not either
  { id = "softmax_rows", problem = "kernelbench-l1/23", sizes = { batch_size = 256, dim = 8 }, reaches = { "norm/rows" } },
  { id = "softmax_split", problem = "kernelbench-l1/23", sizes = { batch_size = 2, dim = 7 },
    reaches = { "norm/split", "norm/packs.unaligned" } },
  { id = "softmax_chunks", problem = "kernelbench-l1/23", sizes = { batch_size = 1, dim = 16384 },
    reaches = { "norm/split.chunks", "norm/packs.unrolled" } },
  { id = "layernorm_rows", problem = "kernelbench-l1/40", sizes = { batch_size = 256, features = 1, dim1 = 1, dim2 = 8 },
    reaches = { "norm/rows.affine" } },
  { id = "layernorm_chunks", problem = "kernelbench-l1/40", sizes = { batch_size = 1, features = 1, dim1 = 128, dim2 = 128 },
    reaches = { "norm/split.affine.chunks", "norm/affine.unrolled" } },
  { id = "layernorm_scalar", problem = "kernelbench-l1/40", sizes = { batch_size = 1, features = 1, dim1 = 1, dim2 = 129 },
    reaches = { "norm/split.affine", "norm/scalar", "norm/scalar.unrolled" } },
  { id = "batchnorm_chunks", problem = "kernelbench-l1/33", sizes = { batch_size = 1, features = 1, dim1 = 128, dim2 = 128 },
    reaches = { "norm/split.channel.chunks" } },
  { id = "batchnorm", problem = "kernelbench-l1/33", sizes = { batch_size = 2, features = 2, dim1 = 3, dim2 = 3 },
    reaches = { "norm/split.channel" } },
  { id = "groupnorm_chunks", problem = "kernelbench-l1/35", sizes = { batch_size = 1, features = 2, num_groups = 1, dim1 = 128, dim2 = 128 },
    reaches = { "norm/split.run.chunks" } },
  { id = "groupnorm", problem = "kernelbench-l1/35", sizes = { batch_size = 1, features = 8, dim1 = 2, dim2 = 2 },
    reaches = { "norm/split.run" } },
  -- RMS norm over 8, 16, 32, 64 and 67 channels
  { id = "rms_cap8", problem = "kernelbench-l1/36", sizes = { batch_size = 1, features = 8, dim1 = 1, dim2 = 3 }, reaches = { "norm/rms.cap8" } },
  { id = "rms_cap16", problem = "kernelbench-l1/36", sizes = { batch_size = 1, features = 16, dim1 = 1, dim2 = 3 }, reaches = { "norm/rms.cap16" } },
  { id = "rms_cap32", problem = "kernelbench-l1/36", sizes = { batch_size = 1, features = 32, dim1 = 1, dim2 = 3 }, reaches = { "norm/rms.cap32" } },
  { id = "rms_cap64", problem = "kernelbench-l1/36", sizes = { batch_size = 1, features = 64, dim1 = 1, dim2 = 3 }, reaches = { "norm/rms.cap64" } },
  { id = "rms_loop", problem = "kernelbench-l1/36", sizes = { batch_size = 1, features = 67, dim1 = 1, dim2 = 3 },
    reaches = { "norm/rms.loop", "norm/rms.loop_rest" } },
  -- pooling: a 1-D row of 512 (128 f32 packs), 256 (64), 23 (no whole packs), 4096 (two
  -- tiles); non-overlapping 11-wide windows over 11 x 704 and 11 x 1408 (rows of 64 and 128)
  { id = "maxpool_rows", problem = "kernelbench-l1/41", sizes = { batch_size = 1, features = 1, sequence_length = 512 },
    reaches = { "pool/rows", "pool/rows.q4" } },
  { id = "maxpool_q2", problem = "kernelbench-l1/41", sizes = { batch_size = 1, features = 1, sequence_length = 256 },
    reaches = { "pool/rows.q2" } },
  { id = "maxpool_scalar", problem = "kernelbench-l1/41", sizes = { batch_size = 1, features = 1, sequence_length = 23 },
    reaches = { "pool/rows.scalar", "pool/rows.q1" } },
  { id = "avgpool_tiles", problem = "kernelbench-l1/44", sizes = { batch_size = 1, in_channels = 1, input_length = 4096 },
    reaches = { "pool/rows.tiles" } },
  { id = "avgpool_direct", problem = "kernelbench-l1/45", sizes = { batch_size = 1, channels = 1, height = 11, width = 22 },
    reaches = { "pool/direct.v1" } },
  { id = "avgpool_direct_v2", problem = "kernelbench-l1/45", sizes = { batch_size = 1, channels = 1, height = 11, width = 704 },
    reaches = { "pool/direct.v2" } },
  { id = "avgpool_direct_v4", problem = "kernelbench-l1/45", sizes = { batch_size = 1, channels = 1, height = 11, width = 1408 },
    reaches = { "pool/direct.v4" } },
  { id = "avgpool_direct_wide", problem = "kernelbench-l1/45", sizes = { batch_size = 2, channels = 1, height = 22, width = 22 },
    limits = { pool = { wide_rows = 0 } }, reaches = { "pool/direct.wide" } },
  -- scans: rows of 4100 (1025 f32 packs: two tiles) and 1027 (no whole packs, two tiles)
  { id = "cumsum", problem = "kernelbench-l1/89", sizes = { batch_size = 2, input_size = 4100 },
    reaches = { "scan/cumsum.packs", "scan/cumsum.tiles" } },
  { id = "cumsum_scalar", problem = "kernelbench-l1/89", sizes = { batch_size = 2, input_size = 1027 },
    reaches = { "scan/cumsum.scalar", "scan/cumsum.tiles" } },
  { id = "cumprod", problem = "kernelbench-l1/90", sizes = { batch_size = 2, input_size = 4100 },
    reaches = { "scan/cumprod.packs", "scan/cumprod.tiles" } },
  { id = "cumprod_scalar", problem = "kernelbench-l1/90", sizes = { batch_size = 2, input_size = 1027 },
    reaches = { "scan/cumprod.scalar", "scan/cumprod.tiles" } },
  { id = "cumsum_reverse", problem = "kernelbench-l1/91", sizes = { batch_size = 2, input_size = 4100 },
    reaches = { "scan/cumsum_reverse.packs", "scan/cumsum_reverse.tiles" } },
  { id = "cumsum_reverse_scalar", problem = "kernelbench-l1/91", sizes = { batch_size = 2, input_size = 1027 },
    reaches = { "scan/cumsum_reverse.scalar", "scan/cumsum_reverse.tiles" } },
  { id = "cumsum_exclusive", problem = "kernelbench-l1/92", sizes = { batch_size = 2, input_size = 4100 },
    reaches = { "scan/cumsum_exclusive.packs", "scan/cumsum_exclusive.tiles" } },
  { id = "cumsum_exclusive_scalar", problem = "kernelbench-l1/92", sizes = { batch_size = 2, input_size = 1027 },
    reaches = { "scan/cumsum_exclusive.scalar", "scan/cumsum_exclusive.tiles" } },
  { id = "masked_cumsum", problem = "kernelbench-l1/93", sizes = { batch_size = 2, input_size = 4100 },
    reaches = { "scan/masked_cumsum.packs", "scan/masked_cumsum.tiles" } },
  { id = "masked_cumsum_scalar", problem = "kernelbench-l1/93", sizes = { batch_size = 2, input_size = 1027 },
    reaches = { "scan/masked_cumsum.scalar", "scan/masked_cumsum.tiles" } },
  { id = "scan_rows_loop", problem = "kernelbench-l1/89", sizes = { batch_size = 3, input_size = 8 },
    limits = { scan = { grid_max = 1 } }, reaches = { "scan/rows_loop" } },
  -- losses: 32775 elements, beyond the 32 resident blocks' 32768 f32 (4 SMs) and 16384 f64, 3 and
  -- 1 after the packs; the hinge loss's rows of 16400 (whole packs) and 4097 (none: 8194
  -- elements beyond 8192)
  { id = "mse", problem = "kernelbench-l1/94", sizes = { batch_size = 1, input_size = 32775 },
    reaches = { "loss/pair.packs", "loss/pair.tail", "loss/pair.loop" } },
  { id = "hinge_packs", problem = "kernelbench-l1/100", sizes = { batch_size = 2, input_size = 16400 },
    reaches = { "loss/pair.bcast.packs", "loss/pair.bcast.loop" } },
  { id = "hinge_scalar", problem = "kernelbench-l1/100", sizes = { batch_size = 2, input_size = 4097 },
    reaches = { "loss/pair.bcast.scalar", "loss/pair.bcast.loop" } },
  -- cross entropy: rows of 516 (a warp's 4 steps of f32 packs are 512), 517 (elements: 128),
  -- 4100 (a block's 4 steps are 4096 packs) and 1027 (1024 elements); 1025 rows over one block
  { id = "ce_warp", problem = "kernelbench-l1/95", sizes = { batch_size = 2, num_classes = 516 },
    reaches = { "loss/ce.warp.packs", "loss/ce.warp.long" } },
  { id = "ce_warp_scalar", problem = "kernelbench-l1/95", sizes = { batch_size = 2, num_classes = 517 },
    reaches = { "loss/ce.warp.scalar", "loss/ce.warp.long" } },
  { id = "ce_block", problem = "kernelbench-l1/95", sizes = { batch_size = 2, num_classes = 4100 },
    reaches = { "loss/ce.block.packs", "loss/ce.block.long" } },
  { id = "ce_block_scalar", problem = "kernelbench-l1/95", sizes = { batch_size = 2, num_classes = 1027 },
    reaches = { "loss/ce.block.scalar", "loss/ce.block.long" } },
  { id = "ce_grid_loop", problem = "kernelbench-l1/95", sizes = { batch_size = 1025, num_classes = 8 },
    limits = { loss = { rows_grid_max = 1 } }, reaches = { "loss/ce.grid_loop", "loss/finish.loop" } },
  -- triplet: rows of 1028 (257 f32 packs) and 257
  { id = "triplet", problem = "kernelbench-l1/99", sizes = { batch_size = 2, input_size = 1028 },
    reaches = { "loss/triplet.packs", "loss/triplet.long" } },
  { id = "triplet_scalar", problem = "kernelbench-l1/99", sizes = { batch_size = 2, input_size = 257 },
    reaches = { "loss/triplet.scalar", "loss/triplet.long" } },
  { id = "triplet_grid_loop", problem = "kernelbench-l1/99", sizes = { batch_size = 3, input_size = 8 },
    limits = { loss = { rows_grid_max = 1 } }, reaches = { "loss/triplet.grid_loop" } },
  -- attention: scores rows of 8, 7, 516 (beyond 4 * 32 f32 packs) and 515 (no whole packs);
  -- the batch in chunks of scores of 512 bytes (2 f32 matrices of 8 x 8) over 3
  { id = "sdpa", problem = "kernelbench-l1/97", python = "sdpa",
    sizes = { batch_size = 1, num_heads = 2, sequence_length = 8, embedding_dimension = 4 },
    reaches = { "attention/softmax.cached.packs" } },
  { id = "sdpa_cached_scalar", problem = "kernelbench-l1/97", python = "sdpa",
    sizes = { batch_size = 1, num_heads = 1, sequence_length = 7, embedding_dimension = 4 },
    reaches = { "attention/softmax.cached.scalar" } },
  { id = "sdpa_long", problem = "kernelbench-l1/97", python = "sdpa",
    sizes = { batch_size = 1, num_heads = 1, sequence_length = 516, embedding_dimension = 4 },
    reaches = { "attention/softmax.long.packs" } },
  { id = "sdpa_long_scalar", problem = "kernelbench-l1/97", python = "sdpa",
    sizes = { batch_size = 1, num_heads = 1, sequence_length = 515, embedding_dimension = 4 },
    reaches = { "attention/softmax.long.scalar" } },
  { id = "sdpa_chunks", problem = "kernelbench-l1/97", python = "sdpa",
    sizes = { batch_size = 3, num_heads = 1, sequence_length = 8, embedding_dimension = 4 },
    limits = { attention = { scores_max_bytes = 512, softmax_grid_max = 1 } },
    reaches = { "attention/chunks", "attention/chunks.partial", "attention/softmax.grid_loop" } },
  -- convolutions: f64 (the oracle) runs the direct kernel, f32 conv_gemm and bf16 conv_mma;
  -- output channels 1, 3 (2 a thread, one left over), 5, 17, 33, 65, 129 pick their paths and
  -- tiles; output rows of 64, 128 and 256 the direct kernel's outputs a thread and the tiles' rows
  { id = "conv_direct_v4", problem = "kernelbench-l1/67", sizes = { batch_size = 1, in_channels = 1, out_channels = 1, length = 130 },
    reaches = { "conv/direct.v4", "conv/direct.co1" } },
  { id = "conv_direct_v2", problem = "kernelbench-l1/67", sizes = { batch_size = 1, in_channels = 1, out_channels = 3, length = 66 },
    reaches = { "conv/direct.v2", "conv/direct.co2", "conv/direct.co_partial" } },
  { id = "conv_mtiles", problem = "kernelbench-l1/67", sizes = { batch_size = 1, in_channels = 1, out_channels = 5, length = 258 },
    dtypes = { "f32", "bf16" },
    reaches = { "conv/direct.co4", "conv/gemm.128x16x2x1", "conv/gemm.mtiles", "conv/mma.128x16x16x16x1", "conv/mma.mtiles" } },
  { id = "conv_17", problem = "kernelbench-l1/67", sizes = { batch_size = 1, in_channels = 2, out_channels = 17, length = 10 },
    dtypes = { "f32", "bf16" }, reaches = { "conv/gemm.128x32x4x1", "conv/mma.64x32x32x16x1", "conv/direct.v1" } },
  { id = "conv_33", problem = "kernelbench-l1/67", sizes = { batch_size = 1, in_channels = 2, out_channels = 33, length = 10 },
    dtypes = { "f32", "bf16" }, reaches = { "conv/gemm.256x64x8x2", "conv/mma.64x64x32x32x1" } },
  { id = "conv_65", problem = "kernelbench-l1/67", sizes = { batch_size = 1, in_channels = 2, out_channels = 65, length = 10 },
    dtypes = { "f32", "bf16" }, reaches = { "conv/gemm.ntiles", "conv/mma.128x128x64x32x2" } },
  { id = "conv_129", problem = "kernelbench-l1/67", sizes = { batch_size = 1, in_channels = 2, out_channels = 129, length = 10 },
    dtypes = { "bf16" }, reaches = { "conv/mma.ntiles" } },
  { id = "convt_direct_v4", problem = "kernelbench-l1/64", sizes = { batch_size = 1, in_channels = 1, out_channels = 1, length = 126 },
    reaches = { "conv/direct.transposed.v4" } },
  { id = "convt_direct_v2", problem = "kernelbench-l1/64", sizes = { batch_size = 1, in_channels = 1, out_channels = 1, length = 62 },
    reaches = { "conv/direct.transposed.v2" } },
  { id = "convt", problem = "kernelbench-l1/64", sizes = { batch_size = 1, in_channels = 2, out_channels = 8, length = 8 },
    dtypes = { "f32", "bf16" }, reaches = { "conv/direct.transposed.v1", "conv/gemm.transposed", "conv/mma.transposed" } },
  { id = "convt_z_loop", problem = "kernelbench-l1/79", sizes = { batch_size = 1, in_channels = 2, out_channels = 8, length = 8 },
    dtypes = { "f32", "bf16" }, limits = { conv = { z_max = 1, pack_grid_max = 1 } },
    reaches = { "conv/gemm.z_loop", "conv/mma.z_loop", "conv/pack.loop" } },
  -- embedding bags: rows of 8 (two f32 packs: 16 groups a warp, bags of up to 17 rows), 132
  -- (33 f32 packs) and 131; 9 bags; a table of 4096 rows (two blocks of marks)
  { id = "bag", problem = "dlrm-bench/2", sizes = { rows = 8, dim = 8, batch_size = 17 },
    reaches = { "embedding/bag.packs", "embedding/bag.groups" } },
  { id = "bag_wide", problem = "dlrm-bench/2", sizes = { rows = 8, dim = 132, batch_size = 2 },
    reaches = { "embedding/bag.packs", "embedding/bag.full_warp", "embedding/bag.wide" } },
  { id = "bag_scalar", problem = "dlrm-bench/2", sizes = { rows = 8, dim = 131, batch_size = 2 },
    reaches = { "embedding/bag.scalar", "embedding/bag.wide" } },
  { id = "bag_grid_loop", problem = "dlrm-bench/2", sizes = { rows = 8, dim = 8, batch_size = 9 },
    limits = { embedding = { grid_max = 1 } }, reaches = { "embedding/bag.grid_loop" } },
  { id = "adagrad", problem = "dlrm-bench/6", sizes = { rows = 16, dim = 33, touched = 9 },
    limits = { embedding = { grid_max = 1 } },
    reaches = { "embedding/adagrad", "embedding/adagrad.long", "embedding/adagrad.grid_loop" } },
  { id = "bag_backward", problem = "dlrm-bench/5", sizes = { rows = 4096, dim = 33, batch_size = 16 },
    limits = { embedding = { grid_max = 1 } },
    reaches = { "embedding/backward", "embedding/backward.scan_blocks", "embedding/backward.long", "embedding/backward.grid_loop" } },
  { id = "sparse_sgd", problem = "dlrm-bench-variants/6", sizes = { rows = 64, dim = 8, batch_size = 40 },
    limits = { embedding = { grid_max = 1 } }, reaches = { "embedding/sgd", "embedding/sgd.grid_loop" } },
  -- the dot interaction: 24 features of 11 (264 elements, 276 pairs); 17 of 16 (289 entries of S)
  { id = "interaction", problem = "dlrm-bench/7", sizes = { batch_size = 1, features = 24, dim = 11 },
    reaches = { "interaction/forward", "interaction/forward.elems_loop", "interaction/forward.pairs_loop" } },
  { id = "interaction_backward", problem = "dlrm-bench/8", sizes = { batch_size = 1, features = 17, dim = 16 },
    reaches = { "interaction/backward", "interaction/backward.elems_loop", "interaction/backward.square_loop" } },
  { id = "interaction_samples", problem = "dlrm-bench/7", sizes = { batch_size = 2, features = 3, dim = 4 },
    limits = { interaction = { grid_max = 1 } }, reaches = { "interaction/forward.samples_loop" } },
  { id = "interaction_backward_samples", problem = "dlrm-bench/8", sizes = { batch_size = 2, features = 3, dim = 4 },
    limits = { interaction = { grid_max = 1 } }, reaches = { "interaction/backward.samples_loop" } },
  -- linear layers: the bottom MLP's 512-wide first layer and a cross of 2 x 129 over one block
  { id = "mlp", problem = "dlrm-bench/10", sizes = { batch_size = 2 }, limits = { linear = { grid_max = 1 } },
    reaches = { "linear/bias_rows", "linear/bias_rows.grid_loop" } },
  { id = "dcn", problem = "dlrm-bench/9", sizes = { batch_size = 2, features = 129, rank = 8 },
    limits = { linear = { grid_max = 1 } }, reaches = { "linear/mul_add", "linear/mul_add.grid_loop" } },
  { id = "bce", problem = "dlrm-bench/11", sizes = { batch_size = 9, features = 33 }, limits = { linear = { grid_max = 1 } },
    reaches = { "linear/bce", "linear/bce.long", "linear/bce.grid_loop" } },
  -- sparse preprocessing: 26 features of 40 bags (1040 lengths, beyond one a thread)
  { id = "sparse", problem = "dlrm-bench/12", sizes = { batch_size = 2 },
    reaches = { "sparse/offsets", "sparse/linearize" } },
  { id = "sparse_chunks", problem = "dlrm-bench/12", sizes = { batch_size = 40 }, limits = { sparse = { grid_max = 1 } },
    reaches = { "sparse/offsets.chunks", "sparse/linearize.grid_loop" } },
}

-- Outputs whose baseline cannot meet its dtype's thresholds at small sizes, and why: the
-- baseline's thresholds there (problem name -> dtype -> output -> {rel_l2, max_scaled, why}).
-- The oracle is held to oracle.TORCH_F64_TOL (or oracle.TORCH_F64_KNOWN's allowance).
M.LOOSE = {
  ["97_ScaledDotProductAttention"] = { bf16 = { out = { rel_l2 = 0.02, max_scaled = 0.06,
    why = "the scores Q K^T / sqrt(D) are rounded to bf16 before the softmax, as PyTorch's math path rounds them: on the shifted trial (means up to +-3) they reach about 36 at D 16, where half a bf16 ulp is 0.125, a factor of up to 1.13 in exp; the baseline's error measured 1.00e-2 relative on the H200 (seed 3, shifted, cap 16), 3.9e-3 centred and 1.9e-3 on the problem's own inputs" } } },
  ["11_Head_BCE_fwd_bwd"] = { bf16 = { db = { rel_l2 = 0.1, max_scaled = 0.1,
    why = "the bias gradient is one sum of (sigmoid(z) - y) / B over a batch of 2, whose terms cancel: at bf16 the baseline's error there measured 2.0e-2 relative (seed 2, 8 features), its other outputs' under 7e-3" } } },
}

-- judge(inst, cap, run, r): prints the run's worst relative L2 errors (baseline, oracle) and
-- raises unless oracle.torch_within accepts the result
function M.judge(inst, cap, run, r)
  local worst_b, worst_o = 0, 0
  for _, o in ipairs(r.outputs) do
    if o.baseline.rel_l2 then
      worst_b = math.max(worst_b, o.baseline.rel_l2)
      worst_o = math.max(worst_o, o.oracle.rel_l2)
    end
  end
  io.stderr:write(("  %s %s cap %d seed %d %s: baseline %.3g, oracle %.3g\n"):format(
    inst.problem.name, inst.dtype, cap, run.seed, run.variant, worst_b, worst_o))
  local loose = M.LOOSE[inst.problem.name] and M.LOOSE[inst.problem.name][inst.dtype]
  local ok, bad = oracle.torch_within(r, inst.dtype, loose)
  assert(ok, ("seed %d, %s inputs: %s"):format(run.seed, run.variant, tostring(bad)))
end

return M
