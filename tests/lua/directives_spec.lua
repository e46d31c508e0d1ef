-- kreach.candidate.directives: the source check of a candidate's preprocessing. Each refused case
-- reaches a file outside the CUDA toolkit's headers under some reading of the source (NVRTC
-- 13.0 compiled each of them and read the file, measured); each allowed case must stay
-- allowed, or ordinary candidates would be refused.
local directives = require "kreach.candidate.directives"

local function check(src, options)
  return directives.check(src, directives.context(options or {}))
end

local ALLOWED = {
  { "a toolkit header, <> and \"\"", '#include <cuda_fp16.h>\n#include "cuda_bf16.h"\n' },
  { "spaces, a comment, a header in a subdirectory", '  #  include   <crt/host_defines.h> // why\n' },
  { "pragmas that read nothing", '#pragma unroll\n#pragma once\n#pragma nv_diag_suppress 177\n' },
  { "__has_include of a toolkit header", '#if __has_include(<cuda_fp16.h>)\n#endif\n' },
  { "token pasting without a piece of __has_include", '#define CAT(a, b) a##b\nint CAT(x, y);\n' },
  { "directives in comments and strings",
    '/* #include "/etc/passwd" */\n// #include "/etc/passwd"\nconst char *s = "#include \\"/etc/passwd\\"";\n' },
  { "a computed _Pragma", '#define P(x) _Pragma(#x)\nP(unroll)\n' },
  { "a digit separator", "int a = 1'000'000;\n" },
  { "CR LF line ends", '#include <cuda_fp16.h>\r\nint x;\r\n' },
  { "conditionals, errors, line", '#ifdef X\n#error no\n#elif 1\n#line 10 "k.cu"\n#else\n#endif\n' },
  { "NVRTC's built-in header", '#include <__nv_nvrtc_builtin_header.h>\n' },
  { "a comment that spans lines before code", 'int zz; /* a\n b */ int y;\n' },
  { "the toolkit's _CCCL_HAS_INCLUDE of a toolkit header", '#if _CCCL_HAS_INCLUDE(<cuda_fp16.h>)\n#endif\n' },
  { "undefining a word of Thrust's include names", '#undef h\n' },
}

local REFUSED = {
  { "an absolute path", '#include "/etc/passwd"\n', 1, "absolute path" },
  { "the environment", 'int x;\n#include "/proc/self/environ"\n', 2, "absolute path" },
  { "..", '#include "../../etc/passwd"\n', 1, "'%.%.'" },
  { ".. inside a toolkit path", '#include <cuda/../../../etc/passwd>\n', 1, "'%.%.'" },
  { "a macro", '#define INC "/etc/passwd"\n#include INC\n', 2, "computed by a macro" },
  { "a digraph", '%:include "/etc/passwd"\n', 1, "absolute path" },
  { "a trigraph", '??=include "/etc/passwd"\n', 1, "absolute path" },
  { "a trigraph splice", '#inc??/\nlude "/etc/passwd"\n', 1, "" },
  { "a line splice", 'int x;\n#inc\\\nlude "/etc/passwd"\n', 2, "absolute path" },
  { "comments inside the directive", '#/**/include/**/"/etc/passwd"\n', 1, "absolute path" },
  { "a comment across lines", '#include /*\n*/ "/etc/passwd"\n', 1, "absolute path" },
  { "#include_next", '#include_next <cuda_fp16.h>\n', 1, "#include_next is not allowed" },
  { "#embed", '#embed "/etc/passwd"\n', 1, "#embed is not allowed" },
  { "#import", '#import "/etc/passwd"\n', 1, "#import is not allowed" },
  { "a line marker", '# 12 "/etc/passwd"\n', 1, "line markers" },
  { "__has_include of a host file", '#if __has_include("/etc/passwd")\n#endif\n', 1, "absolute path" },
  { "__has_include through a macro", '#define X __has_include\n#if X("/etc/passwd")\n#endif\n', 1, "literal header name" },
  { "__has_include of a macro", '#define H "/etc/passwd"\n#if __has_include(H)\n#endif\n', 2, "literal header name" },
  { "__has_include pasted", '#define CAT(a,b) a##b\n#if CAT(__has_,include)("/etc/hostname")\n#endif\n', 2, "token pasting" },
  { "a pragma naming a file", '#pragma GCC dependency "/etc/passwd"\n', 1, "names files" },
  { "_Pragma naming a file", '_Pragma("GCC dependency \\"/etc/passwd\\"")\n', 1, "names files" },
  { "Thrust's configuration", '#define THRUST_DEVICE_SYSTEM 3\n', 1, "Thrust" },
  { "a file of the working directory", '#include "CMakeLists.txt"\n', 1, "working directory" },
  { "a header the toolkit does not have", '#include <nosuchheader.h>\n', 1, "not a header of the CUDA toolkit" },
  { "odd characters in a header name", '#include <cuda fp16.h>\n', 1, "may hold only" },
  { "a lone carriage return", 'int x;\r#include "/etc/passwd"\n', 1, "carriage return" },
  { "a backslash before spaces", '#define A \\ \n#include "/etc/passwd"\n', 1, "backslash followed by spaces" },
  { "a NUL byte", 'int x;\0\n', 1, "NUL" },
  { "an include in a raw string (C++03 reads it)", 'auto s = R"(\n#include "/etc/passwd"\n)";\n', 2, "absolute path" },
  { "an include after a digit separator (C++11 reads a comment-less line)",
    "int a = 1'0; /*'\n#include \"/etc/passwd\"\n*/\n", 2, "absolute path" },
  { "an include in an array initialiser", 'const char a[] = {\n#include "/etc/passwd"\n};\n', 2, "absolute path" },
  -- issue 33, H2: NVRTC starts a line after a block comment that spans lines
  { "an include after a comment that spans lines (NVRTC reads a new line)",
    'int zz; /*\n*/ #include "/etc/passwd"\n', 2, "absolute path" },
  { "a pragma after a comment that spans lines",
    'int zz; /* x\n y */ #pragma GCC dependency "/etc/passwd"\n', 2, "names files" },
  -- issue 33, H3: the toolkit's macros that paste, or wrap __has_include
  { "__has_include pasted by the toolkit's _CCCL_PP_CAT",
    'int x;\n#if _CCCL_PP_CAT(__has_, include)("/etc/hostname")\n#endif\n', 2, "piece of __has_include" },
  { "__has_include pasted from '_' by a nested paste",
    'int x;\n#if _CCCL_PP_CAT(_CCCL_PP_CAT(_, _), has_include)("/etc/hostname")\n#endif\n', 2, "piece of __has_include" },
  { "the toolkit's _CCCL_HAS_INCLUDE of a host file", '#if _CCCL_HAS_INCLUDE("/etc/shadow")\n#endif\n', 1, "absolute path" },
  { "the toolkit's _CCCL_HAS_INCLUDE of a macro", '#define F "/etc/shadow"\n#if _CCCL_HAS_INCLUDE(F)\n#endif\n', 2, "literal header name" },
  { "the toolkit's _CCCL_HAS_INCLUDE through a macro", '#define W _CCCL_HAS_INCLUDE\n', 1, "allowed only as _CCCL_HAS_INCLUDE%(<header>%)" },
  -- issue 33, H1: the words Thrust's computed #include names are built from
  { "defining a word of Thrust's include names", '#define tabulate /etc/passwd //\n', 1, "Thrust's headers build #include names" },
  { "defining 'h'", 'int x;\n#define h passwd>\n', 2, "Thrust's headers build #include names" },
}

describe("kreach.candidate.directives", function()
  for _, c in ipairs(ALLOWED) do
    it("allows " .. c[1], function()
      local ok, line, why = check(c[2])
      assert.is_true(ok, why and ("line " .. line .. ": " .. why))
    end)
  end
  for _, c in ipairs(REFUSED) do
    it("refuses " .. c[1], function()
      local ok, line, why = check(c[2])
      assert.is_nil(ok)
      assert.equals(c[3], line)
      assert.matches(c[4], why)
    end)
  end

  it("follows the candidate's -I directories inside the toolkit", function()
    local inc = require("kreach.run.seal").toolkit_root() .. "/include"
    assert.is_nil(check("#include <cuda/std/cstdint>\n"))
    assert.is_true(check("#include <cuda/std/cstdint>\n", { "-I" .. inc .. "/cccl" }))
  end)

  it("refuses -D options that would feed __has_include or Thrust's includes", function()
    local ok, _, why = check("int x;\n", { "-DX=__has_include" })
    assert.is_nil(ok)
    assert.matches("__has_include in a macro", why)
    ok, _, why = check("#define C(a, b) a##b\n", { "-DX=__has" })
    assert.is_nil(ok)
    assert.matches("token pasting", why)
    ok, _, why = check("int x;\n", { "-DTHRUST_HOST_SYSTEM=4" })
    assert.is_nil(ok)
    assert.matches("Thrust", why)
  end)

  it("refuses -D options that define a word of Thrust's include names (issue 33, H1)", function()
    for _, o in ipairs({ "-Dtabulate=/etc/passwd", "-Dh", "-Dthrust=x", "-D__has_=1" }) do
      local ok, _, why = check("int x;\n", { o })
      assert.is_nil(ok, o)
      assert.matches("is not allowed", why)
    end
    local ok, _, why = check("int x;\n", { "-DX=__has_" })
    assert.is_nil(ok)
    assert.matches("piece of __has_include", why)
  end)

  -- The lists are the toolkit's: rebuilt here from its headers, so that a toolkit that adds a
  -- computed #include, or a wrapper of __has_include, fails this test instead of the check.
  it("knows every word of the toolkit's computed #include names and every __has_include wrapper", function()
    local lfs = require "lfs"
    local inc = require("kreach.run.seal").toolkit_root() .. "/include"
    local defs, computed = {}, {}
    local function scan(dir)
      for f in lfs.dir(dir) do
        if f ~= "." and f ~= ".." then
          local p = dir .. "/" .. f
          local mode = lfs.symlinkattributes(p, "mode")
          if mode == "directory" then scan(p)
          elseif mode == "file" then
            local fh = io.open(p, "rb")
            local t = fh:read("a"):gsub("\\\n", " ")
            fh:close()
            if t:find("#", 1, true) then
              for line in t:gmatch("[^\n]+") do
                local m = line:match("^%s*#%s*include%s+([%a_][%w_]*)")
                if m then computed[m] = true end
                local name, rest = line:match("^%s*#%s*define%s+([%a_][%w_]*)(.*)$")
                if name then
                  rest = rest:gsub("^%b()", ""):gsub("//.*", "")
                  defs[name] = defs[name] or {}
                  table.insert(defs[name], rest)
                end
              end
            end
          end
        end
      end
    end
    local t0 = os.clock()
    scan(inc)
    -- the words an #include of a macro reaches
    local words, seen, todo = {}, {}, {}
    for m in pairs(computed) do todo[#todo + 1] = m end
    while #todo > 0 do
      local m = table.remove(todo)
      if not seen[m] then
        seen[m] = true
        for _, repl in ipairs(defs[m] or {}) do
          for w in repl:gmatch("[%a_][%w_]*") do
            if defs[w] then todo[#todo + 1] = w end
            if not w:match("^_*THRUST") then words[w] = true end
          end
        end
      end
    end
    local missing = {}
    for w in pairs(words) do
      if not directives.INCLUDE_NAME_WORDS[w] and not defs[w] then missing[#missing + 1] = w end
    end
    table.sort(missing)
    assert.same({}, missing)
    assert.is_true(next(computed) ~= nil, "no computed #include found in " .. inc)
    -- the macros that expand, directly or through others, to __has_include
    local wraps = { __has_include = true, __has_include_next = true, __has_embed = true }
    local grew = true
    while grew do
      grew = false
      for name, repls in pairs(defs) do
        if not wraps[name] then
          for _, repl in ipairs(repls) do
            for w in repl:gmatch("[%a_][%w_]*") do
              if wraps[w] and not wraps[name] then wraps[name], grew = true, true end
            end
          end
        end
      end
    end
    local unknown = {}
    for name in pairs(wraps) do
      if not directives.HAS_INCLUDE[name] then unknown[#unknown + 1] = name end
    end
    table.sort(unknown)
    assert.same({}, unknown)
    print(("  the toolkit's headers scanned in %.2f s"):format(os.clock() - t0))
  end)

  it("marks a source it passes for a confined build, and not one it refuses", function()
    local nvrtc = require "kreach.core.nvrtc"
    local function key(src, confine)
      return assert(nvrtc.build{ source = src, arch = "sm_90", no_cache = true, confine = confine }).key
    end
    local src = '#include <cuda_fp16.h>\nextern "C" __global__ void checked(float *x) {}\n'
    local plain, conf = key(src, false), key(src, true)
    assert.are_not.equal(plain, conf)
    assert.is_true(check(src))
    assert.equals(conf, key(src, false))
    local refused = '__device__ int h_; /*\n*/ extern "C" __global__ void r(float *x) {}\n#define h 1\n'
    local before = key(refused, false)
    assert.is_nil(check(refused))
    assert.equals(before, key(refused, false))
  end)

  it("checks a large source in well under a second", function()
    local body = ("__global__ void k%d(float *y) { y[threadIdx.x] = 1'0 * 2.0f; /* c */ } // x\n"):rep(2000)
    local t0 = os.clock()
    assert.is_true(check("#include <cuda_fp16.h>\n" .. body))
    local dt = os.clock() - t0
    print(("  %d KiB checked in %.3f s"):format(#body // 1024, dt))
    assert.is_true(dt < 5)
  end)
end)
