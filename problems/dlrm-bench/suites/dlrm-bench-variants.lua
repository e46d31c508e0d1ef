-- DLRM-Bench's variants: problems that are another form of one of the twelve, kept apart so
-- that dlrm-bench stays the study's twelve. Named dlrm-bench-variants/N (N the problem they
-- vary) or by name.
--    6 SGD's sparse update, index_add_ of the lookups' gradients (problem 6 is row-wise Adagrad)
return {
  name = "dlrm-bench-variants",
  description = "DLRM-Bench's variants: problem 6's SGD index_add_ update",
  dir = "dlrm-bench/variants",
  ids = { 6 },
  pending = {},
  bare_ids = false,
}
