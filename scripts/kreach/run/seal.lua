-- kreach.run.seal: the policy of the sealed worker (docs/candidates.md, "The seal"). A worker
-- that loads, compiles and runs a candidate gets an environment built from an allow-list, a
-- private directory, a limit on its data memory (RLIMIT_DATA), a pipe that ends it when its
-- parent dies, and, after its setup and before it reads the candidate, a Landlock ruleset: it reads only
-- the CUDA toolkit, cuDNN's libraries when its setup loaded cuDNN, kreach's own files, the
-- problem, the candidate and its private directory, and writes only to that directory and the
-- compile cache. The mechanism is kreach.core.seal
-- (runtime/kr_seal.c); this module decides the paths, the variables and the limits.
local core = require "kreach.core.seal"
local kcore = require "kreach.core"
local ctiming = require "kreach.core.timing"
local cudnn = require "kreach.cudnn"
local errors = require "kreach.errors"
local lfs = require "lfs"
local nvrtc = require "kreach.core.nvrtc"
local output = require "kreach.atomic"

local M = {}

M.GIB = 1024 * 1024 * 1024
-- The default memory limit of a worker: the smaller of this and half the host's memory.
M.MAX_DEFAULT_MEMORY_BYTES = 16 * M.GIB
-- The smallest --worker-memory taken (the worker's own libraries map about 0.8 GiB).
M.MIN_MEMORY_BYTES = 64 * 1024 * 1024

-- The variables a worker gets from its parent, when set there. Nothing else passes: not the
-- parent's API keys, tokens or anything a later command adds to the environment.
-- KREACH_CACHE_MAX passes so that the compile cache's cap (and 0, no disk cache) holds in the
-- workers, which compile the candidates, and a value that is not a size is refused there.
M.ENV_PASS = {
  "PATH", "LD_LIBRARY_PATH",
  "CUDA_HOME", "CUDA_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_MODULE_LOADING",
  "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_MAX_CONNECTIONS", "NVIDIA_TF32_OVERRIDE",
  "CUBLAS_WORKSPACE_CONFIG",
  "KREACH_DEVICE", "KREACH_LUA_DIR", "KREACH_PROBLEMS", "KREACH_UNSEALED", "KREACH_NO_LANDLOCK",
  "KREACH_SEAL_EXTRA_READ", "KREACH_CUDNN", "KREACH_CUDNN_SELECT", "KREACH_CUDNN_DEBUG", "KREACH_PYTHON",
  "KREACH_CACHE_MAX",
}
-- ... and these, which the parent sets: the private directory (also HOME and TMPDIR), the
-- compile cache, the memory limit, the fd of the parent watch, and the C locale.
M.ENV_SET = { "KREACH_WORKER_DIR", "KREACH_CACHE_DIR", "KREACH_WORKER_MEMORY", "KREACH_WORKER_WATCH",
              "HOME", "TMPDIR", "LANG", "LC_ALL" }

-- ---- sizes ----

local UNITS = { [""] = 1, K = 1024, M = 1024 ^ 2, G = 1024 ^ 3, T = 1024 ^ 4 }

-- parse_size("8G") -> bytes, or nil and why. Units K, M, G, T (powers of 1024, with or without
-- a trailing "iB" or "B"); a plain number is bytes. At least M.MIN_MEMORY_BYTES.
function M.parse_size(s)
  local num, unit = tostring(s):upper():match("^%s*(%d+%.?%d*)%s*([KMGT]?)I?B?%s*$")
  local bytes = num and UNITS[unit] and math.floor(tonumber(num) * UNITS[unit])
  if not bytes then return nil, ("'%s' is not a size (such as 8G or 512M)"):format(tostring(s)) end
  -- the worker takes the limit as a 64-bit integer (setrlimit's rlim_t through Lua): a size
  -- past it would fail in every worker, so it is refused here, before any starts
  if not math.tointeger(bytes) or bytes >= 2 ^ 63 then
    return nil, ("'%s' is too large: a worker's memory limit (--worker-memory) is below 8 EiB (8388608T)")
      :format(tostring(s))
  end
  if bytes < M.MIN_MEMORY_BYTES then
    return nil, ("'%s' is too small: at least %s"):format(tostring(s), M.format_size(M.MIN_MEMORY_BYTES))
  end
  return math.tointeger(bytes)
end

function M.format_size(b)
  if not b then return "unlimited" end
  if b >= M.GIB then return ("%.1f GiB"):format(b / M.GIB) end
  return ("%d MiB"):format(b // (1024 * 1024))
end

-- The default memory limit: the smaller of 16 GiB and half the host's memory.
function M.default_memory_bytes()
  local host = core.host_memory()
  if host <= 0 then return M.MAX_DEFAULT_MEMORY_BYTES end
  return math.min(M.MAX_DEFAULT_MEMORY_BYTES, host // 2)
end

-- What a message about memory says of the limit: "the worker's memory is limited to
-- 1.0 GiB (--worker-memory)", or nil without a limit.
function M.memory_note(bytes)
  bytes = bytes or core.memory_limit()
  if not bytes then return nil end
  return ("the worker's memory (RLIMIT_DATA) is limited to %s (--worker-memory changes it)"):format(M.format_size(bytes))
end

-- ---- paths ----

-- The CUDA toolkit: the first of $CUDA_HOME, $CUDA_PATH and /usr/local/cuda with an include/
-- directory (as runtime/kr_nvrtc.c picks it).
function M.toolkit_root()
  for _, v in ipairs({ os.getenv("CUDA_HOME"), os.getenv("CUDA_PATH"), "/usr/local/cuda" }) do
    if v and v ~= "" and lfs.attributes(v .. "/include", "mode") == "directory" then
      return (v:gsub("(.)/+$", "%1"))
    end
  end
end

-- The compile cache's directory, as runtime/kr_nvrtc.c chooses it in the parent (the worker's
-- HOME is its private directory, so the parent passes it explicitly).
function M.cache_dir()
  local d = os.getenv("KREACH_CACHE_DIR")
  if d then return d ~= "" and d or nil end
  local x = os.getenv("XDG_CACHE_HOME")
  if x and x ~= "" then return x .. "/kreach" end
  local h = os.getenv("HOME")
  if h and h ~= "" then return h .. "/.cache/kreach" end
end

local mkdirs = output.mkdirs

-- Removes a directory tree without following links.
local function remove_tree(path)
  local mode = lfs.symlinkattributes(path, "mode")
  if mode == "directory" then
    for f in lfs.dir(path) do
      if f ~= "." and f ~= ".." then remove_tree(path .. "/" .. f) end
    end
    lfs.rmdir(path)
  elseif mode then
    os.remove(path)
  end
end
M.remove_tree = remove_tree

-- ---- availability ----

-- landlock() -> ABI (>= 1), or 0 and why not. KREACH_NO_LANDLOCK=1 makes kreach act as on a
-- kernel without Landlock (for tests of the refusal; it can only make kreach stricter).
function M.landlock()
  if os.getenv("KREACH_NO_LANDLOCK") == "1" then return 0, "KREACH_NO_LANDLOCK=1 is set" end
  return core.landlock_abi()
end

-- True when the user asked to run candidates without the filesystem seal.
function M.unsealed() return os.getenv("KREACH_UNSEALED") == "1" end

-- For commands that run candidates, before they start a worker: true, or nil and the message
-- of the refusal (Landlock is unavailable and KREACH_UNSEALED=1 is not set). With
-- KREACH_UNSEALED=1 it says so on standard error, once per command.
local warned = false
function M.check_available(command)
  -- a bad KREACH_CACHE_MAX is the user's, said once here (status 2), not a compile error of
  -- every candidate in the workers that read it
  local cap, cerr = nvrtc.cache_max()
  if not cap then errors.usage(cerr) end
  local abi, why = M.landlock()
  if M.unsealed() then
    if not warned then
      warned = true
      io.stderr:write(("kreach %s: WARNING: KREACH_UNSEALED=1: candidates run WITHOUT the filesystem seal (%s); "
        .. "the source check, the environment allow-list, the memory limit and the parent watch still apply\n"):format(
        command, abi >= 1 and ("Landlock ABI " .. abi .. " is available but not used") or ("Landlock: " .. why)))
    end
    return true
  end
  if abi >= 1 then return true end
  return nil, ("cannot seal the worker: %s. Candidates are not run unsealed; set KREACH_UNSEALED=1 to run them "
    .. "anyway (docs/candidates.md, \"The seal\")"):format(why)
end

-- ---- the parent's side ----

local function set_env(env, k, v) if v then env[#env + 1] = k .. "=" .. v end end

-- prepare({memory_bytes =}) -> { env = {"K=V", ...}, dir = private directory, memory_bytes =,
-- cleanup = function }, or nil and why. The parent calls cleanup once the worker has ended.
function M.prepare(o)
  o = o or {}
  local tmp = os.getenv("TMPDIR")
  if not tmp or tmp == "" then tmp = "/tmp" end
  local dir, err = core.mkdtemp(tmp .. "/kreach-worker-XXXXXX")
  if not dir then return nil, err end
  local cache = M.cache_dir()
  if cache and not mkdirs(cache) then cache = nil end
  local mem = o.memory_bytes or M.default_memory_bytes()
  local env = {}
  for _, k in ipairs(M.ENV_PASS) do set_env(env, k, os.getenv(k)) end
  -- where this process found cuDNN, so that a worker's search (kreach.cudnn) finds the same
  -- library without asking python3 again
  if not os.getenv("KREACH_CUDNN") then set_env(env, "KREACH_CUDNN", cudnn.found_path()) end
  set_env(env, "KREACH_WORKER_DIR", dir)
  set_env(env, "KREACH_CACHE_DIR", cache and core.realpath(cache) or (dir .. "/cache"))
  set_env(env, "KREACH_WORKER_MEMORY", tostring(math.tointeger(mem) or mem))
  set_env(env, "KREACH_WORKER_WATCH", "0")
  set_env(env, "HOME", dir)
  set_env(env, "TMPDIR", dir)
  set_env(env, "LANG", "C")
  set_env(env, "LC_ALL", "C")
  return { env = env, dir = dir, memory_bytes = mem, cleanup = function() remove_tree(dir) end }
end

-- The protections as `kreach info` reports them.
function M.status()
  local abi, why = M.landlock()
  local s = {
    landlock_abi = abi, landlock_unavailable = abi < 1 and why or nil,
    filesystem = M.unsealed() and "off (KREACH_UNSEALED=1)" or (abi >= 1 and "landlock" or "unavailable"),
    candidates_refused = abi < 1 and not M.unsealed(),
    memory_bytes = M.default_memory_bytes(), host_memory_bytes = core.host_memory(),
    env_allowed = M.ENV_PASS, parent_watch = "pipe and PR_SET_PDEATHSIG",
    source_check = "includes only of literal CUDA toolkit headers; NVRTC confined to them",
    toolkit = M.toolkit_root(),
    -- what a worker that loaded cuDNN during its setup (a convolution's baseline) also reads:
    -- the library files of the cuDNN this process loaded (none before kreach.cudnn.available())
    cudnn_reads = cudnn.library_files(),
  }
  return s
end

-- ---- the worker's side ----

-- The seal as it stands in this worker, for its result (nil outside a worker).
local record = nil
function M.record() return record end

-- First thing in a worker: the memory limit ($KREACH_WORKER_MEMORY, else the default) and the
-- parent watch (on fd $KREACH_WORKER_WATCH; the parent's process is polled either way).
-- Returns true, or nil and why.
function M.enter_worker()
  local mem = tonumber(os.getenv("KREACH_WORKER_MEMORY") or "") or M.default_memory_bytes()
  mem = math.tointeger(mem) or math.floor(mem)
  local ok, err = core.limit_memory(mem)
  if not ok then return nil, err end
  local fd = tonumber(os.getenv("KREACH_WORKER_WATCH") or "") or -1
  ok, err = core.watch_parent(math.tointeger(fd) or -1)
  if not ok then return nil, err end
  record = { filesystem = "none", memory_bytes = mem, env = "allow-list", parent_watch = fd >= 0 and "pipe" or "poll" }
  return true
end

local function real(p)
  return p and p ~= "" and core.realpath(p) or nil
end

-- A list of Landlock rules and the function that adds one: each path resolved (a path that
-- does not resolve is left out) and listed once.
local function rule_list()
  local rules, seen = {}, {}
  return rules, function(path, access)
    local r = real(path)
    if r and not seen[r] then
      seen[r] = true
      rules[#rules + 1] = { path = r, access = access }
    end
  end
end

-- What every sealed process may read and use of /dev: the null, zero and random devices and
-- the GPU's device files. Nothing of /proc, not even the worker's own entry
-- (KREACH_SEAL_EXTRA_READ=/proc/self adds it, should a driver need it after its setup:
-- Landlock checks the file a path resolves to, so /proc/self/root/... and ../<ppid>/environ
-- would stay out of reach); the paths of KREACH_SEAL_EXTRA_READ.
local function add_common(add)
  for p in (os.getenv("KREACH_SEAL_EXTRA_READ") or ""):gmatch("[^:]+") do add(p, "read") end
  add("/dev/null", "device")
  add("/dev/zero", "read")
  add("/dev/urandom", "read")
  local ok, iter, st = pcall(lfs.dir, "/dev")
  if ok then
    for f in iter, st do
      if f:match("^nvidia") then add("/dev/" .. f, "device") end
    end
  end
end

-- The Landlock rules of a worker: o.candidate (the file), o.problem (the file), o.loader_cache
-- (NVRTC's builtins could not be loaded ahead: the dynamic loader's cache stays readable);
-- roots: the problem roots (kreach.problem.roots(), from the caller: this module does not load
-- the problem language; none given, none is readable).
function M.rules(o, roots)
  local rules, add = rule_list()
  add(M.toolkit_root(), "read")
  add(core.nvrtc_dir(), "read")
  for _, f in ipairs(cudnn.library_files()) do add(f, "read") end
  local exe = kcore.executable()
  add(exe and exe:match("^(.*)/[^/]*$"), "read")
  add(os.getenv("KREACH_LUA_DIR"), "read")
  for _, r in ipairs(roots or {}) do add(r, "read") end
  add(o.problem, "read")
  add(o.candidate, "read")
  if o.loader_cache then add("/etc/ld.so.cache", "read") end
  add(os.getenv("KREACH_WORKER_DIR"), "write")
  add(M.cache_dir(), "write")
  add_common(add)
  return rules
end

-- apply({candidate =, problem =, device = bool, nvml = bool}, roots): the end of a worker's
-- setup; roots: the problem roots the worker may read (kreach.problem.roots(), M.rules).
-- Loads now what would be loaded later from outside the seal (the CUDA context when device,
-- NVML when nvml, NVRTC's builtins, and cuDNN's sub-libraries and handle when the setup loaded
-- cuDNN), then restricts the process with Landlock. With a
-- candidate and no Landlock it refuses unless KREACH_UNSEALED=1. Returns the seal's record, or
-- nil and why.
function M.apply(o, roots)
  record = record or { memory_bytes = core.memory_limit(), env = "inherited", parent_watch = "none" }
  if o.device then kcore.has_device() end
  if o.nvml then pcall(ctiming.clocks) end
  -- loaded now, NVRTC's own dlopen finds it without the loader's cache; should that fail, the
  -- cache (public: which libraries live where) stays readable
  o.loader_cache = not core.preload_nvrtc_builtins()
  -- cuDNN opens its sub-libraries (and they theirs: libz, libstdc++, and cuBLASLt, without
  -- which it aborts the process) on first use, which would be after the seal, from directories
  -- it closes: a worker whose setup loaded cuDNN (kreach.cudnn.available()) loads them now;
  -- cuDNN's library files stay readable (M.rules)
  if cudnn.dir() then
    local ok, err = cudnn.preload()
    if not ok then return nil, "cannot prepare cuDNN for the seal: " .. tostring(err) end
    record.cudnn = cudnn.dir()
  end
  local abi, why = M.landlock()
  if M.unsealed() then
    record.filesystem, record.unsealed = "none", "KREACH_UNSEALED=1"
    return record
  end
  if abi < 1 then
    if o.candidate then return nil, ("cannot seal the worker (%s) and KREACH_UNSEALED=1 is not set"):format(why) end
    record.filesystem = "none" -- the harness's own code only (a baseline, a calibration)
    return record
  end
  local used, err = core.landlock(M.rules(o, roots))
  if not used then return nil, err end
  record.filesystem, record.landlock_abi = "landlock", used
  return record
end


-- ---- the Python worker of a KernelBench-format candidate ----

-- The directories a KernelBench-format candidate's builds use, keyed by its source (so that the
-- same source finds its build again, and no two candidates share one): PyTorch's extension
-- directory and Triton's cache, under the compile cache. Made when missing. Returns
-- { extensions =, triton = }, or nil and why.
function M.python_build_dirs(source_hash)
  local cache = M.cache_dir()
  if not cache then return nil, "no compile cache directory (KREACH_CACHE_DIR, XDG_CACHE_HOME or HOME)" end
  local d = { extensions = cache .. "/torch_extensions/" .. source_hash, triton = cache .. "/triton/" .. source_hash }
  for _, dir in pairs(d) do
    local ok, err = mkdirs(dir)
    if not ok then return nil, ("cannot make %s: %s"):format(dir, tostring(err)) end
    d[_] = real(dir) or dir
  end
  return d
end

-- Files of /etc that compilers, the dynamic loader and Python read; the rest of /etc is closed.
M.PYTHON_ETC = { "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/passwd",
                 "/etc/group", "/etc/nsswitch.conf", "/etc/localtime", "/etc/os-release" }

-- The Landlock rules of the Python worker that runs a KernelBench-format candidate: it reads
-- and runs the system's programs and libraries (/usr, /bin, /lib, /lib64: the C++ compiler and
-- ninja of load_inline, the C compiler of Triton's launcher), the CUDA toolkit (nvcc), the
-- interpreter's own directories (o.dirs: its prefixes and packages, PyTorch's and Triton's
-- included), a few files of /etc and /sys; it writes only to the worker's private directory
-- (its HOME and TMPDIR) and the candidate's build directories (o.write); it uses the GPU's
-- device files. Not reachable: /proc (other processes' environments), /home and /root, the
-- results database, kreach's compile cache, the network (TCP).
function M.python_rules(o)
  local rules, add = rule_list()
  for _, d in ipairs({ "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64" }) do add(d, "exec") end
  add(M.toolkit_root(), "exec")
  for _, d in ipairs(o.dirs or {}) do add(d, "exec") end
  for _, f in ipairs(cudnn.library_files()) do add(f, "read") end
  for _, f in ipairs(M.PYTHON_ETC) do add(f, "read") end
  add("/sys", "read")
  add(os.getenv("KREACH_WORKER_DIR"), "write")
  for _, d in ipairs(o.write or {}) do add(d, "write") end
  add_common(add)
  return rules
end

-- python_ruleset({dirs =, write =}) -> descriptor (or false when KREACH_UNSEALED=1), and the
-- seal's record, or nil and why: the ruleset the Python worker applies to itself before it runs
-- a candidate (kreach.pytorch.start's ruleset). Without Landlock it refuses, as M.apply does
-- for a candidate, unless KREACH_UNSEALED=1.
function M.python_ruleset(o)
  if M.unsealed() then return false, { filesystem = "none", unsealed = "KREACH_UNSEALED=1" } end
  local abi, why = M.landlock()
  if abi < 1 then
    return nil, ("cannot seal the Python worker (%s) and KREACH_UNSEALED=1 is not set"):format(why)
  end
  local fd, err = core.ruleset(M.python_rules(o))
  if not fd then return nil, "cannot make the Python worker's Landlock ruleset: " .. tostring(err) end
  return fd, { filesystem = "landlock", landlock_abi = abi }
end

-- close_fd(descriptor): the ruleset's descriptor, once the Python worker has it
function M.close_fd(fd) core.close_fd(fd) end

return M
