-- kreach.verdict: the one verdict every evaluation ends in, with its reason. Verdicts are plain
-- tables that serialise to JSON: { verdict =, reason =, detail = }.
local text = require "kreach.text"

local M = {}

-- verdict -> the reasons it may carry (nil: a reason is free text)
M.REASONS = {
  correct = {},
  incorrect = { wrong_values = true, incomplete_write = true, non_finite = true,
                input_mutation = true, nondeterministic = true, trivial_output = true,
                faster_than_physically_possible = true },
  compile_error = nil,
  runtime_error = nil,
  timeout = nil,
  skipped = nil,
  invalid_candidate = nil,
  baseline = {},  -- no candidate: the baseline timed alone (kreach bench)
}
M.KINDS = { "correct", "incorrect", "compile_error", "runtime_error", "timeout", "skipped",
            "invalid_candidate", "baseline" }
local KNOWN = {}
for _, k in ipairs(M.KINDS) do KNOWN[k] = true end

-- new(verdict, reason, detail): raises on a verdict or reason that does not exist, so that a
-- typo in the harness cannot produce a verdict nobody reports. The reason and the detail often
-- carry a candidate's words (its error messages, its compiler log): both are bounded and
-- stripped of terminal controls here (kreach.text.clean), the one door every verdict passes.
function M.new(verdict, reason, detail)
  if not KNOWN[verdict] then error(("unknown verdict '%s'"):format(tostring(verdict)), 2) end
  if verdict == "correct" or verdict == "baseline" then
    if reason ~= nil then error(("a %s verdict has no reason"):format(verdict), 2) end
  else
    if type(reason) ~= "string" or reason == "" then
      error(("verdict '%s' needs a reason"):format(verdict), 2)
    end
    local allowed = M.REASONS[verdict]
    if allowed and not allowed[reason] then
      error(("'%s' is not a reason for verdict '%s'"):format(reason, verdict), 2)
    end
  end
  if type(detail) == "table" then detail = text.clean_all(detail) elseif type(detail) == "string" then detail = text.clean(detail) end
  return { verdict = verdict, reason = text.clean(reason), detail = detail }
end

function M.correct(detail) return M.new("correct", nil, detail) end

-- The verdict of a baseline timed alone, without a candidate (kreach bench).
function M.baseline(detail) return M.new("baseline", nil, detail) end

-- The verdict for an error raised while loading or running a candidate's Lua.
function M.from_candidate_error(e)
  local msg = tostring(type(e) == "table" and e.msg or e)
  return M.new("invalid_candidate", msg)
end

function M.is_correct(v) return v.verdict == "correct" end

return M
