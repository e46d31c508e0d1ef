-- NVRTC through the Lua binding, without a GPU: build results, compile errors as data,
-- misuse as errors, kernel signatures, and the cache.
local kreach = require "kreach"

local tmpdir = require("support").tmpdir

local SRC = [[
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void every(double *a, float *b, __half *c, __nv_bfloat16 *d,
                                 long long *e, int *f, short *g, signed char *h,
                                 unsigned char *i, bool *j, int s1, unsigned s2,
                                 long long s3, size_t s4, float s5, double s6, __half s7,
                                 __nv_bfloat16 s8, bool s9) {}
extern "C" __global__ void __launch_bounds__(256) vec(const float4 *__restrict__ x, float2 *y) {}
]]

describe("kreach.build", function()
  local dir
  setup(function() dir = tmpdir() end)

  it("loads NVRTC on first use, not at start-up", function()
    -- the binary does not link libnvrtc (kr_nvrtc_api.c): a fresh process has not mapped it
    -- until something asks for it
    local f = io.popen(("%q -e 'for l in io.lines(\"/proc/self/maps\") do if l:find(\"libnvrtc\", 1, true) then print(l) end end'"):format(kreach.executable()))
    local maps = f:read("a")
    f:close()
    assert.equals("", maps)
    assert.is_true(require("kreach.core.nvrtc").load())
    local mapped = false
    for l in io.lines("/proc/self/maps") do if l:find("libnvrtc", 1, true) then mapped = true end end
    assert.is_true(mapped)
  end)

  it("compiles for an explicit arch with no GPU and reports its kernels", function()
    local p = assert(kreach.build{ source = SRC, arch = "sm_90", cache_dir = dir, name = "all.cu" })
    assert.equals("sm_90", p.arch)
    assert.equals("all.cu", p.name)
    assert.same({ "every", "vec" }, p.kernels)
    local kinds = {}
    for _, pa in ipairs(p.every.params) do kinds[#kinds + 1] = pa.kind .. ":" .. (pa.elem or "") end
    assert.same({ "ptr:f64", "ptr:f32", "ptr:f16", "ptr:bf16", "ptr:i64", "ptr:i32", "ptr:i16",
                  "ptr:i8", "ptr:u8", "ptr:bool", "i32:", "u32:", "i64:", "u64:", "f32:", "f64:",
                  "f16:", "bf16:", "bool:" }, kinds)
    local v = p:kernel("vec").params
    assert.equals("f32", v[1].elem)
    assert.equals(4, v[1].vec)
    assert.is_true(v[1].const)
    assert.equals(2, v[2].vec)
    assert.equals(8, p.vec.line)
  end)

  it("returns nil and the log, with file and line, for a source that does not compile", function()
    local p, err = kreach.build{ source = "extern \"C\" __global__ void f() {\n  int x = y;\n}\n",
                                 arch = "sm_90", name = "broken.cu", cache_dir = dir }
    assert.is_nil(p)
    assert.matches("broken%.cu%(2%): error", err)
    assert.matches('identifier "y" is undefined', err)
  end)

  it("serves a second build from the cache, and a new process from disk", function()
    local src = "extern \"C\" __global__ void k(int *x) { x[0] = 7; }\n"
    local a = assert(kreach.build{ source = src, arch = "sm_90", cache_dir = dir })
    assert.equals("miss", a.cache)
    local b = assert(kreach.build{ source = src, arch = "sm_90", cache_dir = dir })
    assert.equals("memory", b.cache)
    assert.equals(a.key, b.key)
    assert.equals(a:cubin(), b:cubin())
    local bin = kreach.executable()
    local cmd = ("%q -e 'local p = require(\"kreach\").build{source = %q, arch = \"sm_90\", cache_dir = %q}; io.write(p.cache)'")
      :format(bin, src, dir)
    local f = io.popen(cmd)
    local out = f:read("a")
    f:close()
    assert.equals("disk", out)
  end)

  it("rebuilds a corrupt disk entry", function()
    local src = "extern \"C\" __global__ void k2(int *x) { x[0] = 9; }\n"
    local a = assert(kreach.build{ source = src, arch = "sm_90", cache_dir = dir })
    local f = assert(io.open(a.cache_path, "r+b"))
    f:seek("set", 60)
    f:write("garbage")
    f:close()
    local bin = kreach.executable()
    local cmd = ("%q -e 'local p = require(\"kreach\").build{source = %q, arch = \"sm_90\", cache_dir = %q}; io.write(p.cache, \"|\", p.cache_note)'")
      :format(bin, src, dir)
    local out = io.popen(cmd):read("a")
    assert.matches("^rebuilt|.*checksum", out)
  end)

  it("raises on misuse", function()
    assert.has_error(function() kreach.build{ arch = "sm_90" } end, "nvrtc.build: 'source' is required")
    assert.has_error(function() kreach.build{ source = "", arch = "sm_90", optoins = {} } end)
    local ok, err = pcall(kreach.build, { source = "", arch = "sm_90", optoins = {} })
    assert.matches("unknown option 'optoins'", err)
    ok, err = pcall(kreach.build, { source = "", arch = "sm90" })
    assert.matches("not of the form sm_90", err)
    ok, err = pcall(kreach.build, { source = "", arch = "sm_90", options = { "-arch=sm_80" } })
    assert.matches("give the architecture as arch", err)
    ok, err = pcall(kreach.build, { source = "", arch = "sm_90", options = { 1 } })
    assert.matches("element 1 is number", err)
  end)

  it("names the kernels it has when asked for one it has not", function()
    local p = assert(kreach.build{ source = SRC, arch = "sm_90", cache_dir = dir })
    local ok, err = pcall(function() return p.nope end)
    assert.is_false(ok)
    assert.matches("has no kernel 'nope' %(kernels: every, vec%)", err)
  end)

  -- issue 33: NVRTC's own file calls checked; a host file reads as a missing one, for #include
  -- and __has_include, and a compile error cannot tell them apart
  it("confines a build to the toolkit's headers (confine = true)", function()
    local function err(src, confine)
      local p, e = kreach.build{ source = src, arch = "sm_90", no_cache = true, confine = confine, name = "c.cu" }
      return p and "compiled" or e
    end
    local K = '\nextern "C" __global__ void k(float *x) {}\n'
    local host, missing = '#include "/etc/hostname"' .. K, '#include "/etc/kreach-no-such-file"' .. K
    assert.matches("/etc/hostname%(1%)", err(host, false))
    -- the message's line (the caret below it sits where the name ends)
    local e1 = err(host, true):match("[^\n]*cannot open[^\n]*"):gsub("/etc/hostname", "N")
    local e2 = err(missing, true):match("[^\n]*cannot open[^\n]*"):gsub("/etc/kreach%-no%-such%-file", "N")
    assert.matches('cannot open source file "N"', e1)
    assert.equals(e2, e1)
    local probe = '#if __has_include("/etc/hostname")\n#error yes\n#else\n#error no\n#endif\n'
    assert.matches("#error directive: yes", err(probe, false))
    assert.matches("#error directive: no", err(probe, true))
    assert.equals("compiled", err("#include <cuda_fp16.h>" .. K, true))
    assert.has_error(function() kreach.build{ source = K, arch = "sm_90", confine = "yes" } end)
  end)

  -- what the scan missed before issue 33, compiled without it: unconfined, NVRTC reads or
  -- probes the host's files; confined, none of it reaches them
  it("stops, confined, the sources the scan once missed (issue 33, H1-H3)", function()
    local CCCL = { "-I" .. require("kreach.run.seal").toolkit_root() .. "/include/cccl" }
    local K = '\nextern "C" __global__ void k(float *x) {}\n'
    local cases = {
      { "H1", "#define cpp ../../../../../../../../../../../etc/passwd>\n#include <thrust/tabulate.h>" .. K, "root:" },
      { "H2", 'int zz; /*\n*/ #include "/etc/passwd"' .. K, "root:" },
      { "H3", '#include <cuda/std/__cccl/preprocessor.h>\n#if _CCCL_PP_CAT(__has_, include)("/etc/passwd")\n#error probe: it exists\n#endif' .. K, "probe: it exists" },
      { "H3", '#include <cuda/std/__cccl/preprocessor.h>\n#if _CCCL_HAS_INCLUDE("/etc/passwd")\n#error probe: it exists\n#endif' .. K, "probe: it exists" },
    }
    for _, c in ipairs(cases) do
      local _, open = kreach.build{ source = c[2], arch = "sm_90", no_cache = true, options = CCCL }
      assert.matches(c[3], open or "", 1, true)
      local _, shut = kreach.build{ source = c[2], arch = "sm_90", no_cache = true, options = CCCL, confine = true }
      assert.is_nil((shut or ""):find(c[3], 1, true), c[1] .. ": " .. tostring(shut))
    end
  end)

  it("builds a source marked by confine_source confined, whoever builds it", function()
    local nvrtc = require "kreach.core.nvrtc"
    local src = '#include <cuda_fp16.h>\nextern "C" __global__ void marked(float *x) {}\n'
    local plain = assert(kreach.build{ source = src, arch = "sm_90", no_cache = true })
    local conf = assert(kreach.build{ source = src, arch = "sm_90", no_cache = true, confine = true })
    assert.are_not.equal(plain.key, conf.key)
    nvrtc.confine_source(src)
    local marked = assert(kreach.build{ source = src, arch = "sm_90", no_cache = true })
    assert.equals(conf.key, marked.key)
  end)

  it("frees a program once, and refuses to use it after", function()
    local p = assert(kreach.build{ source = SRC, arch = "sm_90", cache_dir = dir })
    local k = p.vec
    p:free()
    p:free()
    assert.has_error(function() return p.arch end, "program has been freed")
    assert.has_error(function() return k.params end, "the kernel's program has been freed")
  end)
end)

describe("kreach without a GPU", function()
  if kreach.has_device() then
    pending("runs on machines without a GPU")
    return
  end
  it("reports versions and fails the first GPU operation clearly", function()
    local v = kreach.versions()
    assert.matches("^13%.", v.nvrtc)
    assert.is_false(v.driver)
    local ok, why = kreach.has_device()
    assert.is_false(ok)
    assert.is_string(why)
    ok, why = pcall(kreach.empty, { 2, 2 })
    assert.matches("no CUDA device: ", why)
    ok, why = pcall(kreach.build, { source = "extern \"C\" __global__ void f() {}" })
    assert.matches("explicit arch", why)
  end)
end)
