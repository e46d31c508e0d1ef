-- The input hash on the GPU (issue 34): kreach.ops' lib.hash, the hash_bytes kernel compiled by
-- NVRTC, over the cases of tests/lua/hash_cases.lua for every dtype: a change of any element,
-- byte or bit of an input changes its hash (what input_mutation is judged by). The host spec
-- (tests/lua/hash_inputs_spec.lua) runs the same cases through the kernel emulated on the CPU;
-- here the grid is the GPU's (8 blocks an SM), so the large case goes round the grid-stride
-- loop of a real launch.
local kreach = require "kreach"
local core = require "kreach.core"
local ops = require "kreach.ops"
local support = require "support"
local cases = require "hash_cases"

describe("the input hash on the GPU", function()
  local lib = ops.get(false)
  local threads = core.device().sm_count * 8 * 256
  local rand = support.rng(support.seed("gpu/hash_spec"))

  cases.its(it, assert, lib, threads, rand, kreach.dtypes)
end)
