-- DLRM-Bench: twelve recommender kernel problems (issue 18), with shapes from the public
-- configurations (facebookresearch/dlrm's Criteo Kaggle and Terabyte scripts, MLPerf DLRM v1,
-- MLPerf DLRM v2 / DCNv2 multi-hot), the ones experiments/workloads/dlrm.py runs. Ids 1 to 12
-- are this suite's own: name them dlrm-bench/N (a bare number is KernelBench's) or by name.
-- The problems arrive one by one; until then they are pending (kreach list dlrm-bench):
--    1 one-hot embedding_bag(sum) over 26 tables, concatenated   7 dot interaction
--    2 embedding_bag(sum), jagged bags                           8 its backward
--    3 weighted or mean bag                                      9 DCNv2 low-rank cross
--    4 table-batched multi-hot forward                          10 bottom MLP
--    5 embedding backward: sort and segment-sum per row         11 head: Linear + sigmoid + BCE
--    6 sparse row-wise Adagrad (and SGD index_add_)             12 sparse id preprocessing
return {
  name = "dlrm-bench",
  description = "DLRM-Bench: 12 recommender kernel problems (embeddings, interaction, MLPs, optimiser)",
  dir = "dlrm-bench",
  ids = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 },
  pending = {},
  bare_ids = false,
}
