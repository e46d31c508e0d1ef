-- kreach.cudnn: where cuDNN comes from, and whether it is there (docs/scripting.md, "cuDNN").
-- The mechanism is kreach.core.cudnn (runtime/kr_cudnn.c: it loads the file it is given); this
-- module decides where to look:
--   1. $KREACH_CUDNN: the library file, or a directory holding libcudnn.so.9. Set but wrong,
--      it ends the search with why (never a silent fall back to another cuDNN);
--   2. the standard library paths: dlopen("libcudnn.so.9") searches the binary's run path
--      (/usr/local/cuda/lib64), LD_LIBRARY_PATH, the loader's cache and the system's
--      directories. dlopen is the only way to ask them, so what it finds stays loaded;
--   3. PyTorch's: the nvidia/cudnn/lib directory of the nvidia-cudnn package (the wheel
--      PyTorch depends on) under python3's site-packages, which python3 itself lists (its
--      virtual environment included: on the GPU machine python3 is a venv's), else the usual
--      system and user directories. torch is not imported (seconds); python3 starts in tens of
--      milliseconds, once per process.
-- Issue 17 put the standard paths before KREACH_CUDNN. They come after it here because the GPU
-- machine has a cuDNN (9.14) in /usr/lib/x86_64-linux-gnu besides PyTorch's (9.19): in the
-- issue's order the variable could never choose PyTorch's there, or anything on a machine whose
-- system has one. Nothing here falls back silently: callers (the convolutions' baselines) ask
-- available() and record which baseline ran.
local core = require "kreach.core.cudnn"
local chost = require "kreach.core.host"
local errors = require "kreach.errors"
local proc = require "kreach.core.proc"
local cseal = require "kreach.core.seal"
local lfs = require "lfs"
local pytorch = require "kreach.pytorch"

local M = {}

M.SONAME = "libcudnn.so.9"
-- Where the nvidia-cudnn wheel puts its libraries, under a site-packages directory (the second
-- is the layout of NVIDIA's CUDA 13 wheels that share one directory).
M.PACKAGE_DIRS = { "nvidia/cudnn/lib", "nvidia/cu13/lib" }
-- How long python3 may take to list its site-packages.
M.PYTHON_TIMEOUT_S = 20

local function exists(path) return lfs.attributes(path, "mode") ~= nil end

local function python() return (pytorch.python()) end

-- "9.19.0" from 91900
function M.version_string(v)
  if not v then return nil end
  return ("%d.%d.%d"):format(v // 10000, v // 100 % 100, v % 100)
end

-- from_env(value) -> the library's path, or nil and why. value: a file (taken as it is) or a
-- directory holding libcudnn.so.9.
function M.from_env(value)
  local mode = lfs.attributes(value, "mode")
  if not mode then return nil, ("KREACH_CUDNN=%s: no such file or directory"):format(value) end
  if mode == "directory" then
    local f = value:gsub("/+$", "") .. "/" .. M.SONAME
    if exists(f) then return f end
    return nil, ("KREACH_CUDNN=%s: the directory holds no %s"):format(value, M.SONAME)
  end
  if mode == "file" then return value end
  return nil, ("KREACH_CUDNN=%s: not a file or a directory (%s)"):format(value, mode)
end

-- The directories matching dir/prefix* (no recursion), sorted.
local function glob_dirs(dir, prefix, suffix)
  local out = {}
  local ok, iter, st = pcall(lfs.dir, dir)
  if not ok then return out end
  for f in iter, st do
    if f:sub(1, #prefix) == prefix then
      local p = dir .. "/" .. f .. suffix
      if lfs.attributes(p, "mode") == "directory" then out[#out + 1] = p end
    end
  end
  table.sort(out)
  return out
end

-- python3's own list: site.getsitepackages() and the user's site-packages; nil and why when
-- python3 cannot be run.
function M.python_site_packages()
  local code = "import site\nfor p in site.getsitepackages() + [site.getusersitepackages()]: print(p)"
  local w, err = proc.spawn({ python(), "-I", "-c", code })
  if not w then return nil, ("cannot run %s: %s"):format(python(), tostring(err)) end
  local dirs = {}
  while true do
    local line, why = w:read_line(M.PYTHON_TIMEOUT_S)
    if not line then
      if why ~= "eof" then w:kill() end
      break
    end
    if line ~= "" then dirs[#dirs + 1] = line end
  end
  local how, code_ = w:wait()
  w:free()
  if how ~= "exited" or code_ ~= 0 then
    return nil, ("%s could not list its site-packages (%s %s)"):format(python(), how, tostring(code_))
  end
  return dirs
end

-- site_packages() -> the directories to look in: python3's list first, then the usual system
-- and user ones (for a machine where python3 is another interpreter, or missing), each once;
-- and, when python3 could not answer, why.
function M.site_packages()
  local dirs, seen = {}, {}
  local function add(d)
    if d and not seen[d] then
      seen[d] = true
      dirs[#dirs + 1] = d
    end
  end
  local py, why = M.python_site_packages()
  for _, d in ipairs(py or {}) do add(d) end
  for _, d in ipairs(glob_dirs("/usr/local/lib", "python3", "/dist-packages")) do add(d) end
  for _, d in ipairs(glob_dirs("/usr/local/lib", "python3", "/site-packages")) do add(d) end
  add("/usr/lib/python3/dist-packages")
  local home = os.getenv("HOME")
  if home and home ~= "" then
    for _, d in ipairs(glob_dirs(home .. "/.local/lib", "python3", "/site-packages")) do add(d) end
  end
  return dirs, why
end

-- from_site_packages(dirs) -> the library's path, or nil and why: the first
-- <dir>/nvidia/cudnn/lib/libcudnn.so.9 (or the other PACKAGE_DIRS).
function M.from_site_packages(dirs)
  for _, d in ipairs(dirs) do
    for _, rel in ipairs(M.PACKAGE_DIRS) do
      local f = d .. "/" .. rel .. "/" .. M.SONAME
      if exists(f) then return f end
    end
  end
  return nil, ("no %s/%s under %d site-packages director%s (%s)"):format(M.PACKAGE_DIRS[1], M.SONAME, #dirs,
    #dirs == 1 and "y" or "ies", table.concat(dirs, ", "))
end

-- find([o]) -> the library's path and where it was found ("KREACH_CUDNN", "the standard
-- library paths", "PyTorch's nvidia-cudnn package", "already loaded"), or nil and why (every
-- place tried). o.standard = false skips the standard paths (for tests on a machine whose
-- toolkit has cuDNN).
function M.find(o)
  o = o or {}
  local tried = {}
  if core.version() then return core.path(), "already loaded" end
  local env = os.getenv("KREACH_CUDNN")
  if env and env ~= "" then
    local p, why = M.from_env(env)
    if p then return p, "KREACH_CUDNN" end
    return nil, why
  end
  tried[#tried + 1] = "KREACH_CUDNN is not set"
  if o.standard ~= false then
    local ok, err = core.load()
    if ok then return core.path(), "the standard library paths" end
    tried[#tried + 1] = "not in the standard library paths (" .. err .. ")"
  end
  local dirs, pywhy = M.site_packages()
  local p, why = M.from_site_packages(dirs)
  if p then return p, "PyTorch's nvidia-cudnn package" end
  tried[#tried + 1] = why .. (pywhy and ("; " .. pywhy) or "")
  return nil, table.concat(tried, "; ")
end

-- The search's outcome, once per process.
local found = nil

-- available() -> true, or false and why: cuDNN found and loaded (cached: the search runs once
-- per process). Needs no GPU. Call it during a worker's setup, before the seal: afterwards
-- python3 cannot be run and the library's directory cannot be read.
function M.available()
  if not found and chost.is_host() then found = { ok = false, why = "the host device has no cuDNN" } end
  if not found then
    local path, how = M.find()
    if not path then
      found = { ok = false, why = how }
    else
      local ok, err = core.load(path)
      if ok then
        found = { ok = true, path = core.path(), found_by = how, version = core.version() }
      else
        found = { ok = false, why = err }
      end
    end
  end
  return found.ok, found.why
end

-- info() -> { available =, version = "9.19.0", version_number =, path =, found_by =, why =,
-- selection = "pytorch"|"fastest" (or selection_error) }
-- (for kreach info and the evaluation's record); runs the search if it has not run.
function M.info()
  M.available()
  local ok, sel = pcall(M.selection)
  return { available = found.ok, version = M.version_string(found.version), version_number = found.version,
           path = found.path, found_by = found.found_by, why = found.why,
           selection = ok and sel or nil, selection_error = not ok and errors.message(sel) or nil }
end

-- The cached outcome without searching: the path when available() found cuDNN, else nil.
function M.found_path() return found and found.ok and found.path or nil end

-- The directory the loaded cuDNN lives in (its real path), or nil when none is loaded.
function M.dir()
  local p = core.path()
  return p and p:match("^(.*)/[^/]*$") or nil
end

-- The files a sealed worker that loaded cuDNN may still read: cuDNN's libraries (the real paths
-- of libcudnn*.so* beside the loaded one), should cuDNN open one by another name than the one it was preloaded
-- under (kreach.run.seal preloads them, and the cuBLASLt they use, before the seal). Files, not
-- the directory: on the GPU machine that is /usr/lib/x86_64-linux-gnu. Empty when no cuDNN is
-- loaded.
function M.library_files()
  local d = M.dir()
  if not d then return {} end
  local out, seen = {}, {}
  local ok, iter, st = pcall(lfs.dir, d)
  if not ok then return out end
  for f in iter, st do
    local real = f:match("^libcudnn.*%.so") and cseal.realpath(d .. "/" .. f)
    if real and not seen[real] then -- once per file, not per link to it
      seen[real] = true
      out[#out + 1] = real
    end
  end
  table.sort(out)
  return out
end

-- How cuDNN's engine is chosen (runtime/kr_cudnn_conv.c, docs/scripting.md "cuDNN"):
--   pytorch: the engine PyTorch eager runs with torch.backends.cudnn.benchmark off (its default
--            and KernelBench's): the first, in cuDNN's heuristics' order, that PyTorch's
--            filters keep and that runs. kreach's baseline is then PyTorch's own convolution;
--   fastest: the fastest of every allowed engine, timed on the first call's tensors (as with
--            benchmark on): a stronger baseline than the one KernelBench measures against.
M.SELECTIONS = { "pytorch", "fastest" }

-- selection() -> "pytorch" or "fastest": $KREACH_CUDNN_SELECT, else "pytorch". Any other value
-- is an error naming the variable (never a silent default). Read once per process: the
-- convolutions ask on every call, timed ones included.
local selected
function M.selection()
  if selected then return selected end
  local v = os.getenv("KREACH_CUDNN_SELECT")
  if v == nil or v == "" then v = "pytorch" end
  for _, s in ipairs(M.SELECTIONS) do
    if s == v then
      selected = v
      return v
    end
  end
  errors.usage("KREACH_CUDNN_SELECT=%s: expected %s", v, table.concat(M.SELECTIONS, " or "))
end

-- conv(x, w, y, {transposed, stride, padding, dilation, groups, output_padding, bias, select})
-- -> algorithm name, workspace bytes, algorithm number, math type, whether the plan was cached
-- (kreach.core.cudnn.conv); select defaults to selection().
function M.conv(x, w, y, opts)
  opts = opts or {}
  if opts.select == nil then
    local o = {}
    for k, v in pairs(opts) do o[k] = v end
    o.select = M.selection()
    opts = o
  end
  return core.conv(x, w, y, opts)
end

-- Passes through to the mechanism (kreach.core.cudnn): stats(); preload(); version(); path().
M.stats = core.stats
M.preload = core.preload
M.version = core.version
M.path = core.path

return M
