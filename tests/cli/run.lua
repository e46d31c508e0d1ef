-- Runs a CLI transcript: kreach tests/cli/run.lua FILE.t
-- A transcript is a list of commands and what they must do:
--   $ kreach info --json      a command (run by sh; "kreach" is this binary)
--   ? 77                      its exit status (default 0)
--   = exact line              a line its output (stdout and stderr together) must hold
--   ~ lua pattern             a line matching this pattern must appear
--   ! lua pattern             no line may match this pattern
--   # ...                     a comment; "# gpu" on the first line: exit 77 without a GPU,
--                             "# nogpu": exit 77 with one (for what a GPU-less machine does)
--   < text                    a line written to the command's standard input
local path = assert(..., "usage: kreach tests/cli/run.lua FILE.t")
local bin = arg[-1]
local bindir = bin:match("^(.*)/[^/]*$") or "."
local f = assert(io.open(path, "r"))
local lines = {}
for l in f:lines() do lines[#lines + 1] = l end
f:close()

local want = lines[1] and (lines[1]:match("^# (gpu)%f[%W]") or lines[1]:match("^# (nogpu)%f[%W]"))
if want then
  local ok, why = require("kreach").has_device()
  if want == "gpu" and not ok then
    io.stderr:write("skipped: no CUDA device: ", why, "\n")
    os.exit(77)
  elseif want == "nogpu" and ok then
    io.stderr:write("skipped: this transcript is for a machine without a GPU\n")
    os.exit(77)
  end
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local cases, cur = {}, nil
for n, l in ipairs(lines) do
  local tag, rest = l:match("^(.) ?(.*)$")
  if tag == "$" then
    cur = { cmd = rest, line = n, status = 0, expect = {}, input = {} }
    cases[#cases + 1] = cur
  elseif tag == "?" or tag == "=" or tag == "~" or tag == "!" or tag == "<" then
    if not cur then error(("%s:%d: '%s' before any command"):format(path, n, tag)) end
    if tag == "?" then
      cur.status = assert(tonumber(rest), ("%s:%d: bad status"):format(path, n))
    elseif tag == "<" then
      cur.input[#cur.input + 1] = rest
    else
      cur.expect[#cur.expect + 1] = { tag = tag, text = rest, line = n }
    end
  elseif tag and tag ~= "#" and l ~= "" then
    error(("%s:%d: unknown line '%s'"):format(path, n, l))
  end
end

-- The transcript's own temporary directory, removed at the end: the commands' TMPDIR, so that
-- what their mktemp -d makes goes with it
local output = require "kreach.atomic"
local work = assert(output.tmpdir())
local tmp = work .. "/.out"
local failed, passed = 0, 0
for _, c in ipairs(cases) do
  -- "kreach" in a command is this binary: its directory goes first on PATH
  local cmd = "PATH=" .. shell_quote(bindir) .. ":\"$PATH\"; export PATH; TMPDIR=" .. shell_quote(work)
    .. "; export TMPDIR; " .. c.cmd
  local inf = work .. "/.in"
  local fi = assert(io.open(inf, "w"))
  fi:write(table.concat(c.input, "\n"), #c.input > 0 and "\n" or "")
  fi:close()
  local ok, how, code = os.execute("(" .. cmd .. ") <" .. inf .. " >" .. tmp .. " 2>&1")
  os.remove(inf)
  local status = how == "exit" and code or (how == "signal" and 128 + code) or -1
  local out = {}
  for l in io.lines(tmp) do out[#out + 1] = l end
  local problems = {}
  if status ~= c.status then
    problems[#problems + 1] = ("exit status %d, expected %d"):format(status, c.status)
  end
  for _, e in ipairs(c.expect) do
    local hit = false
    for _, l in ipairs(out) do
      if (e.tag == "=" and l == e.text) or (e.tag ~= "=" and l:find(e.text)) then hit = true; break end
    end
    if e.tag == "!" and hit then
      problems[#problems + 1] = ("line %d: output matches '%s'"):format(e.line, e.text)
    elseif e.tag ~= "!" and not hit then
      problems[#problems + 1] = ("line %d: no output line %s '%s'"):format(e.line,
        e.tag == "=" and "equal to" or "matching", e.text)
    end
  end
  if #problems > 0 then
    failed = failed + 1
    io.write(("FAIL %s:%d: $ %s\n"):format(path, c.line, c.cmd))
    for _, p in ipairs(problems) do io.write("  ", p, "\n") end
    io.write("  output:\n")
    for _, l in ipairs(out) do io.write("  | ", l, "\n") end
  else
    passed = passed + 1
    io.write(("ok   $ %s\n"):format(c.cmd))
  end
end
output.remove_tree(work)
io.write(("%d passed, %d failed\n"):format(passed, failed))
os.exit(failed == 0 and 0 or 1)
