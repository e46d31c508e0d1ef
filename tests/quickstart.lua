-- Follows docs/quickstart.md verbatim: kreach tests/quickstart.lua [--gpu] docs/quickstart.md
--
-- The page's fenced blocks say what the test does with them through their info strings:
--   ```<lang> file=PATH   the block is a file: written to PATH (directories made as needed)
--   ```sh                 commands, run by sh; the block must exit 0 (each command: set -e)
--   ```sh status=N        ... the block's last command must exit with status N
--   ```sh gpu             ... needs a GPU: run only with --gpu
--   ```text               what the sh block before it prints (stdout and stderr together):
--                         each line must be found, in order, inside the lines of the output,
--                         after runs of blanks become one space (a table's alignment does not
--                         matter) and sm_NN sm_# (the GPU's architecture); "..." lines are
--                         skipped. So a line may show the start of a row of measured values.
--   ```text gpu|nogpu     ... checked only on a machine with | without a GPU
-- Any other block is prose and is not run.
--
-- Blocks run in order, starting in a new directory that stands for the repository's root: it
-- holds `build` (a link to this binary's directory) and `examples` (a link to the repository's),
-- so the page's commands run unchanged. As in one terminal, the variables a block exports and
-- the directory it ends in reach the next blocks, and a file= block is written relative to that
-- directory. The page must leave the repository as it found it: at the end the stand-in root
-- holds only its two links, the repository's examples/ has no new file, and every directory the
-- page moved to outside the stand-in root (its scratch directory) has been removed. Without --gpu the GPU blocks are skipped (the CPU steps still run, and a GPU
-- present still changes what they print); with --gpu everything runs, and the test exits 77
-- (skipped) without a GPU.
local kreach = require "kreach"
local lfs = require "lfs"

local args = { ... }
local gpu_mode = args[1] == "--gpu"
if gpu_mode then table.remove(args, 1) end
local page = assert(args[1], "usage: kreach tests/quickstart.lua [--gpu] docs/quickstart.md")
local have_gpu = kreach.has_device()
if gpu_mode and not have_gpu then
  io.stderr:write("skipped: no CUDA device: ", select(2, kreach.has_device()), "\n")
  os.exit(77)
end

local work -- the stand-in for the repository's root, kept when the test fails
local cwd  -- the directory the last block ended in: where the next one runs

local function fail(fmt, ...)
  io.stdout:flush()
  io.stderr:write("FAIL: ", fmt:format(...), "\n")
  if work then io.stderr:write("(the working directory is kept: ", work, ")\n") end
  if cwd and cwd ~= work then io.stderr:write("(the page's last directory: ", cwd, ")\n") end
  os.exit(1)
end

local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function realpath(p)
  local h = assert(io.popen("realpath " .. q(p)))
  local r = h:read("l")
  h:close()
  if not r or r == "" then fail("cannot resolve %s", p) end
  return r
end

local function slurp(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function spit(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- ---- the page's blocks ----

-- { kind = "file"|"sh"|"text", line = where it opens, body =, path =, status =, gpu =, nogpu = }
local function parse(text)
  local blocks, cur = {}, nil
  local n = 0
  for line in (text .. (text:sub(-1) == "\n" and "" or "\n")):gmatch("([^\n]*)\n") do
    n = n + 1
    if cur then
      if line:match("^```%s*$") then
        cur.body = table.concat(cur.lines, "\n") .. (#cur.lines > 0 and "\n" or "")
        cur.lines = nil
        if cur.kind then blocks[#blocks + 1] = cur end
        cur = nil
      else
        cur.lines[#cur.lines + 1] = line
      end
    elseif line:match("^```") then
      local lang, rest = line:match("^```(%S*)%s*(.-)%s*$")
      cur = { line = n, lines = {}, lang = lang }
      local words = {}
      for w in rest:gmatch("%S+") do words[#words + 1] = w end
      for _, w in ipairs(words) do
        local k, v = w:match("^([%w_]+)=(.*)$")
        if k == "file" then cur.path = v
        elseif k == "status" then cur.status = math.tointeger(tonumber(v)) or fail("%s:%d: status=%s is not an integer", page, n, v)
        elseif w == "gpu" then cur.gpu = true
        elseif w == "nogpu" then cur.nogpu = true
        else fail("%s:%d: unknown word '%s' in the block's info string", page, n, w) end
      end
      if cur.path then cur.kind = "file"
      elseif lang == "sh" then cur.kind = "sh"
      elseif lang == "text" then cur.kind = "text"
      end
    end
  end
  if cur then fail("%s:%d: the block is never closed", page, cur.line) end
  return blocks
end

-- Blanks become one space (a table's alignment does not matter) and an architecture `sm_#`
-- (what lint compiles for is the GPU's where there is one); everything else must be as shown.
local function norm(s)
  s = s:gsub("sm_%d+", "sm_#")
  return (s:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", ""))
end

-- Every expected line, in order, inside a line of the output after the previous one's.
local function check_output(expected, output)
  local out = {}
  for l in output:gmatch("[^\n]+") do out[#out + 1] = norm(l) end
  local at = 1
  for want in expected:gmatch("[^\n]+") do
    local w = norm(want)
    if w ~= "" and w ~= "..." then
      local found
      for i = at, #out do
        if out[i]:find(w, 1, true) then found = i; break end
      end
      if not found then return false, want end
      at = found + 1
    end
  end
  return true
end

-- ---- the working directory ----

local src = realpath((page:match("^(.*)/[^/]*$") or ".") .. "/..")
local bindir = realpath((arg[-1] or "kreach"):match("^(.*)/[^/]*$") or ".")
work = os.tmpname()
os.remove(work)
assert(lfs.mkdir(work))
local state = work .. ".env" -- beside the directory, so the page's commands never see it
local pwdfile = work .. ".pwd"
local function cleanup()
  os.execute("rm -rf " .. q(work) .. " " .. q(state) .. " " .. q(pwdfile) .. " " .. q(work .. ".sh") .. " " .. q(work .. ".out"))
end
cwd = work
for name, target in pairs({ build = bindir, examples = src .. "/examples" }) do
  assert(lfs.attributes(target, "mode") == "directory", target .. " is not a directory")
  assert(os.execute("ln -s " .. q(target) .. " " .. q(work .. "/" .. name)))
end
-- the page starts from a terminal where kreach's own variables name nothing of this page's
spit(state, "unset KREACH_PROBLEMS KREACH_DB\n")

local function mkdirs(base, path)
  local dir = ""
  for part in path:gmatch("([^/]+)/") do
    dir = dir .. part .. "/"
    if not lfs.attributes(base .. "/" .. dir) then assert(lfs.mkdir(base .. "/" .. dir)) end
  end
end

-- Every path under dir (links not followed), sorted: what the page must not add to.
local function listing(dir)
  local h = assert(io.popen("cd " .. q(dir) .. " && find . | LC_ALL=C sort"))
  local s = h:read("a")
  h:close()
  return s
end
local examples_before = listing(src .. "/examples")
local visited = {} -- the directories outside work that blocks ended in, in order

-- Runs one sh block: returns its exit status and output.
local function run_sh(b)
  local script = work .. ".sh"
  local want = b.status or 0
  local body = { ". " .. q(state) }
  if want == 0 then body[#body + 1] = "set -e" end
  body[#body + 1] = b.body
  body[#body + 1] = "st=$?"
  body[#body + 1] = "set +e"
  body[#body + 1] = "export -p > " .. q(state)
  body[#body + 1] = "pwd > " .. q(pwdfile)
  body[#body + 1] = "exit $st"
  spit(script, table.concat(body, "\n") .. "\n")
  local out = work .. ".out"
  local ok, how, code = os.execute("cd " .. q(cwd) .. " && sh " .. q(script) .. " > " .. q(out) .. " 2>&1")
  local status = how == "exit" and code or 128 + (code or 0)
  local dir = slurp(pwdfile):gsub("\n$", "")
  if dir ~= "" and dir ~= cwd then
    cwd = dir
    local inside = cwd == work or cwd:sub(1, #work + 1) == work .. "/"
    if not inside and not visited[cwd] then visited[cwd] = true; visited[#visited + 1] = cwd end
  end
  return status, slurp(out), ok
end

-- ---- following the page ----

local blocks = parse(slurp(page))
local ran, skipped, checked = 0, 0, 0
local last -- the last sh block: { block =, output =, ran = }
for _, b in ipairs(blocks) do
  if b.kind == "file" then
    if b.path:sub(1, 1) == "/" or b.path:find("..", 1, true) then fail("%s:%d: file=%s is not inside the directory", page, b.line, b.path) end
    mkdirs(cwd, b.path)
    spit(cwd .. "/" .. b.path, b.body)
    print(("-- %s:%d: wrote %s%s"):format(page, b.line, b.path, cwd == work and "" or " (in " .. cwd .. ")"))
  elseif b.kind == "sh" then
    if b.nogpu then fail("%s:%d: a command block is 'gpu' or neither", page, b.line) end
    if b.gpu and not gpu_mode then
      print(("-- %s:%d: skipped (needs a GPU):\n%s"):format(page, b.line, b.body))
      skipped = skipped + 1
      last = { block = b, ran = false }
    else
      print(("-- %s:%d: $ %s"):format(page, b.line, b.body:gsub("\n$", ""):gsub("\n", "\n$ ")))
      local status, output = run_sh(b)
      io.write(output)
      local want = b.status or 0
      if status ~= want then
        fail("%s:%d: the block exited with status %d, expected %d", page, b.line, status, want)
      end
      ran = ran + 1
      last = { block = b, output = output, ran = true }
    end
  elseif b.kind == "text" then
    if not last then fail("%s:%d: an output block before any command block", page, b.line) end
    local applies = last.ran and not (b.gpu and not have_gpu) and not (b.nogpu and have_gpu)
    if applies then
      local ok, missing = check_output(b.body, last.output)
      if not ok then
        fail("%s:%d: the output of the block at line %d has no line like\n  %s\n(in order after the lines found before it)",
          page, b.line, last.block.line, missing)
      end
      checked = checked + 1
    end
  end
end
if ran == 0 then fail("%s: no command block ran", page) end

-- The page wrote nothing into the repository, and removed the scratch directory it worked in.
local left = {}
for name in lfs.dir(work) do
  if name ~= "." and name ~= ".." and name ~= "build" and name ~= "examples" then left[#left + 1] = name end
end
table.sort(left)
if #left > 0 then
  fail("%s: the page wrote into the repository's root: %s (work in a scratch directory)", page, table.concat(left, " "))
end
if listing(src .. "/examples") ~= examples_before then
  fail("%s: the page changed the repository's examples/ (%s)", page, src .. "/examples")
end
for _, dir in ipairs(visited) do
  if lfs.attributes(dir) then fail("%s: the page leaves its directory %s (it ends by removing it)", page, dir) end
end
cleanup()
print(("ok: %d command blocks run, %d skipped (GPU), %d outputs checked (%s)"):format(ran, skipped, checked,
  have_gpu and "with a GPU" or "without a GPU"))
