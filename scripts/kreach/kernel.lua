-- kreach.kernel: CUDA kernels that a problem file (or any script) carries with it, compiled on
-- first use. `kreach.kernel{source = ...}` compiles nothing: the first launch on real tensors
-- compiles for the device (through kreach.core.nvrtc.build, so with its memory and disk
-- caches), and a launch on shape-only tensors (kreach.meta: a problem's reference being
-- validated) compiles for an architecture, with no GPU needed, checks the launch as a real one
-- would, and marks the tensors passed to non-const pointers as written. A problem whose
-- reference needs an operator kreach.ops lacks can thus carry its own kernel and still load,
-- show and validate on a machine without a GPU. A source that does not compile is the problem
-- file's error, named by its file and lines. The facade exposes new() as kreach.kernel;
-- docs/scripting.md ("Problems") is the contract.
local core = require "kreach.core"
local host = require "kreach.host"
local nvrtc = require "kreach.core.nvrtc"
local meta = require "kreach.meta"
local text = require "kreach.text"

local M = {}

-- What a check on shape-only tensors compiles for while no device is open: kreach lint's
-- default, so that validating a reference (kreach show, lint) never opens a GPU. With a device
-- open, the device's own architecture (the program the launches use).
M.CHECK_ARCH = "sm_90"

-- The options of kreach.kernel: kreach.build's, less `arch` (the launch decides it).
local OPTIONS = { source = "string", name = "string", options = "table", instantiate = "table",
                  cache_dir = "string", no_cache = "boolean" }
local OPTION_NAMES = {}
for k in pairs(OPTIONS) do OPTION_NAMES[#OPTION_NAMES + 1] = k end
table.sort(OPTION_NAMES)

local Kernel = {}   -- the object kreach.kernel returns
local methods = {}  -- its methods; any other key is a kernel of its source
local Launcher = {} -- k.<kernel>: called with a launch configuration, like a program's kernel
Launcher.__index = Launcher

-- The file a frame runs ("@path" chunks give the whole path, not Lua's shortened one).
local function frame_file(info)
  if info.source:sub(1, 1) == "@" then return info.source:sub(2) end
  return info.short_src
end

local function copy_strings(list, what)
  if list == nil then return nil end
  local r = {}
  for i, v in ipairs(list) do
    if type(v) ~= "string" then
      error(("kreach.kernel: option '%s': entry %d is a %s, not a string"):format(what, i, type(v)), 3)
    end
    r[i] = v
  end
  return r
end

-- new{source =, name =, options =, instantiate =, cache_dir =, no_cache =} -> a kernel object.
-- Compiles nothing. Misuse (an unknown or mistyped option, no source) raises at the caller.
function M.new(opts)
  if type(opts) ~= "table" then
    error(("bad argument #1 to 'kernel' (table expected, got %s)"):format(type(opts)), 2)
  end
  for k, v in pairs(opts) do
    local want = OPTIONS[k]
    if not want then
      local best = type(k) == "string" and text.suggest(k, OPTION_NAMES)
      error(("kreach.kernel: unknown option '%s'%s (known: %s)"):format(tostring(k),
        best and (" (did you mean '%s'?)"):format(best) or "", table.concat(OPTION_NAMES, ", ")), 2)
    end
    if type(v) ~= want then
      error(("kreach.kernel: option '%s' must be a %s, got %s"):format(k, want, type(v)), 2)
    end
  end
  if opts.source == nil then error("kreach.kernel: 'source' is required (the CUDA C++ source)", 2) end
  local info = debug.getinfo(2, "Sl")
  local file = info and frame_file(info) or "?"
  local build = {
    source = opts.source,
    -- the name NVRTC's messages use; part of the cache key, so it must not vary between runs
    name = opts.name or ((file:match("([^/]+)%.lua$") or "kernel") .. ".cu"),
    options = copy_strings(opts.options, "options"),
    instantiate = copy_strings(opts.instantiate, "instantiate"),
    cache_dir = opts.cache_dir,
    no_cache = opts.no_cache,
  }
  return setmetatable({ _build = build, _file = file, _line = info and info.currentline or 0,
                        _programs = {}, _errors = {}, _launchers = {} }, Kernel)
end

-- ---- compiling ----

-- The line of the defining file that the source's first line is on, when the source is written
-- there verbatim (a long string) and once; else nil. NVRTC's line N is then that line + N - 1.
local function source_first_line(self)
  local f = io.open(self._file, "rb")
  if not f then return nil end
  local body = f:read("a")
  f:close()
  local src = self._build.source
  if src == "" then return nil end
  local at = body:find(src, 1, true)
  if not at or body:find(src, at + 1, true) then return nil end
  local _, newlines = body:sub(1, at - 1):gsub("\n", "")
  return newlines + 1
end

-- A compile error as the problem author needs it: where the kernel was declared, and NVRTC's
-- log with each `name.cu(N)` turned into the defining file's line where that can be known.
local function compile_message(self, arch, log)
  log = (log or ""):gsub("%s+$", "")
  local first = source_first_line(self)
  if first then
    local pat = self._build.name:gsub("%p", "%%%0") .. "%((%d+)%)"
    log = log:gsub(pat, function(n) return ("%s:%d"):format(self._file, first + tonumber(n) - 1) end)
  end
  return ("%s:%d: kreach.kernel '%s' does not compile for %s:\n%s"):format(self._file, self._line,
    self._build.name, arch, log)
end

-- k:build([arch]) -> the program, or nil and the compile error (naming the defining file's
-- lines). arch defaults to the device's (which then needs a GPU); an explicit one needs none.
-- Compiles once per architecture for this object; the compile itself goes through
-- kreach.core.nvrtc.build, with its memory and disk caches.
function methods.build(self, arch)
  if arch == nil then arch = core.device().arch end
  if type(arch) ~= "string" then
    error(("bad argument #1 to 'build' (an architecture such as \"sm_90\" expected, got %s)"):format(type(arch)), 2)
  end
  local prog = self._programs[arch]
  if prog then return prog end
  local err = self._errors[arch]
  if err then return nil, err end
  local o = {}
  for k, v in pairs(self._build) do o[k] = v end
  o.arch = arch
  local log
  prog, log = nvrtc.build(o)
  if not prog then
    err = compile_message(self, arch, log)
    self._errors[arch] = err
    return nil, err
  end
  self._programs[arch] = prog
  return prog
end

-- ---- launching ----

local function any_meta(n, ...)
  for i = 1, n do
    if meta.is_meta((select(i, ...))) then return true end
  end
  return false
end

-- The dry launch: the checks of a launch (kreach.core.nvrtc's launch:check), then the outputs'
-- bookkeeping of a shape-only run: a pointer parameter that is not const is one the kernel
-- writes.
local function check_launch(prog, kname, cfg, n, ...)
  local kern = prog:kernel(kname)
  kern(cfg):check(...)
  local params = kern.params
  for i = 1, n do
    local a, p = (select(i, ...)), params[i]
    if p and p.elem and not p.const and meta.is_meta(a) then a:mark_written() end
  end
end

-- How Lua names this file in positions: the binding's errors (luaL_error) carry the position
-- of their Lua caller, which is this file, never the user's.
local SELF = debug.getinfo(1, "S").short_src

-- Raises `err`, made by the launch at stack level `level` (of the caller of launch()), at the
-- user's line that launched: kreach's own position is dropped, and a message that already
-- names a place (a compile error names the declaration) keeps it.
local function raise_at(err, level)
  if type(err) ~= "string" then error(err, 0) end
  if err:sub(1, #SELF + 1) == SELF .. ":" then err = err:gsub("^[^\n]-:%d+: ", "", 1) end
  local info = debug.getinfo(level + 1, "Sl")
  if info and not err:match("^[^%s:]+:%d+: ") then
    err = ("%s:%d: %s"):format(frame_file(info), info.currentline or 0, err)
  end
  error(err, 0)
end

local function compiled(self, arch)
  local prog, err = methods.build(self, arch)
  if not prog then error(err, 0) end
  return prog
end

-- host_names(source, instantiate) -> the kernels a host build gives a trampoline: each
-- extern "C" __global__ function of the source (__launch_bounds__ and all), then `instantiate`
function M.host_names(source, instantiate)
  local names, seen = {}, {}
  local plain = source:gsub("__launch_bounds__%s*%b()", " ")
  for name in plain:gmatch('extern%s+"C"%s+__global__%s+void%s+([%a_][%w_]*)%s*%(') do
    if not seen[name] then seen[name] = true; names[#names + 1] = name end
  end
  for _, name in ipairs(instantiate or {}) do
    if not seen[name] then seen[name] = true; names[#names + 1] = name end
  end
  return names
end

-- On the host device (KREACH_DEVICE=host): the source compiled by g++ under kreach.emulate
-- (kreach.host), for the kernels host_names finds; a compile error names the declaration.
local function host_program(self)
  local ok, prog = pcall(host.build, { source = self._build.source, name = self._build.name,
    instantiate = M.host_names(self._build.source, self._build.instantiate) })
  if not ok then
    error(("%s:%d: kreach.kernel '%s' does not compile for the host device:\n%s"):format(self._file, self._line,
      self._build.name, tostring(prog)), 0)
  end
  return prog
end

-- The program a launch uses: on shape-only tensors (dry), the open device's architecture's, or
-- M.CHECK_ARCH's while none is open; on real tensors the device's, kept on the object (on the
-- host device, host_program's).
local function program_for(self, dry)
  if dry then
    return compiled(self, core.device_state() == "open" and core.device().arch or M.CHECK_ARCH)
  end
  local prog = rawget(self, "_device_prog") -- a missing field would be taken for a kernel name
  if not prog then
    prog = host.active() and host_program(self) or compiled(self, nil)
    rawset(self, "_device_prog", prog)
  end
  return prog
end

local function launch_now(self, kname, cfg, n, ...)
  if any_meta(n, ...) then
    check_launch(program_for(self, true), kname, cfg, n, ...)
  else
    program_for(self, false)[kname](cfg)(...)
  end
end

-- One launch of kernel `kname`. Called from exactly one frame between it and the user's code
-- (never as a tail call), so that level 3 is the line that launched.
local function launch(self, kname, cfg, ...)
  local ok, err = pcall(launch_now, self, kname, cfg, select("#", ...), ...)
  if not ok then raise_at(err, 3) end
end

-- k.<kernel>{grid =, block =, shared =}(args...): compiles on the first launch, then launches.
Launcher.__call = function(l, cfg)
  if type(cfg) ~= "table" then
    error(("kernel '%s': a launch takes a table {grid =, block =, shared =}, got %s"):format(l.name, type(cfg)), 2)
  end
  return function(...)
    launch(l.k, l.name, cfg, ...)
  end
end

-- k.<kernel>:launch({grid =, block =, shared =}, args...): the same.
function Launcher.launch(l, cfg, ...)
  if type(cfg) ~= "table" then
    error(("kernel '%s': a launch takes a table {grid =, block =, shared =}, got %s"):format(l.name, type(cfg)), 2)
  end
  launch(l.k, l.name, cfg, ...)
end

Launcher.__tostring = function(l) return ("kreach.kernel launcher(%s)"):format(l.name) end

-- k:kernel(name): the launcher of a kernel of the source (for a name that is also a method's).
-- Whether the source has it is known at the first launch, which raises if not.
function methods.kernel(self, name)
  if type(name) ~= "string" then
    error(("bad argument #1 to 'kernel' (a kernel name expected, got %s)"):format(type(name)), 2)
  end
  local l = self._launchers[name]
  if not l then
    l = setmetatable({ k = self, name = name }, Launcher)
    self._launchers[name] = l
  end
  return l
end

-- Fields: name (the CUDA file name in messages), where ("file:line" of the declaration), the
-- methods, and any other key is a kernel's launcher.
Kernel.__index = function(self, key)
  if key == "name" then return self._build.name end
  if key == "where" then return ("%s:%d"):format(self._file, self._line) end
  local m = methods[key]
  if m then return m end
  if type(key) ~= "string" then return nil end
  return methods.kernel(self, key)
end

Kernel.__newindex = function() error("a kreach.kernel is read-only", 2) end

Kernel.__tostring = function(self)
  local archs = {}
  for a in pairs(self._programs) do archs[#archs + 1] = a end
  table.sort(archs)
  return ("kreach.kernel(%s, %s:%d, %s)"):format(self._build.name, self._file, self._line,
    #archs > 0 and ("compiled for " .. table.concat(archs, ", ")) or "not compiled")
end

return M
