-- kreach.problem: the problem stage. It owns what a problem is and where problems are:
--   define    the problem language: kreach.problem{...} (define), the argument constructors
--             (input, param, scalar, output), the checks of a problem table, Problem:instantiate
--   dist      input distributions and init rules as text, host distributions, the host-side
--             draws of structured inputs, the other distributions of the correctness trials
--   inputs    an Instance's arguments on the GPU: drawn, rounded, redrawn, the oracle's copies,
--             the reference run (and validate, on shape-only tensors)
--   files     the sandbox problem and suite files run in, and its time limits
--   registry  the roots, the suites, loading a problem file, resolving a name to a file
--   errors    problem errors (naming the problem, its file and line) and their helpers
--   catalog, export: listing problems and writing them as PyTorch files (required by name)
-- This file re-exports the stage's API (kreach.problem.X); requirers elsewhere use only it.
-- problem/ may require the base modules (kreach.text, kinds, meta, errors, core, home) and
-- kreach.ops; never candidate/, judge/, run/, results/ or cmd/.
local define = require "kreach.problem.define"
local dist = require "kreach.problem.dist"
local files = require "kreach.problem.files"
local perr = require "kreach.problem.errors"
local registry = require "kreach.problem.registry"

local M = {}

-- errors
M.raise = perr.raise
M.error = perr.error
M.is_error = perr.is_error

-- the problem language
M.define = define.define
M.Problem = define.Problem
M.DOMAINS = define.DOMAINS
M.input = define.input
M.param = define.param
M.scalar = define.scalar
M.output = define.output

-- distributions
M.host_dist = dist.host_dist
M.parse_dist = dist.parse_dist
M.init_rule = dist.init_rule
M.bag_offsets = dist.bag_offsets
M.bags_total = dist.bags_total
M.jagged_lengths = dist.jagged_lengths
M.jagged_total = dist.jagged_total
M.other_generator = dist.other_generator

-- the registry
M.load = registry.load
M.find_suite = registry.find_suite
M.suites = registry.suites
M.load_suite = registry.load_suite
M.resolve = registry.resolve

-- What a caller (a test) may set, and the modules read through their own tables: read and
-- written through to the module that owns it, so that kreach.problem.LOAD_LIMIT_S = 0.2 or
-- kreach.problem.roots = f holds for the loads and lookups inside the stage.
local OWNER = { LOAD_LIMIT_S = files, FIELD_LIMIT_S = files, DRAW_LIMIT_S = files, run_in_file = files,
  roots = registry }
return setmetatable(M, {
  __index = function(_, k)
    local owner = OWNER[k]
    if owner then return owner[k] end
  end,
  __newindex = function(t, k, v)
    local owner = OWNER[k]
    if owner then owner[k] = v else rawset(t, k, v) end
  end,
})
