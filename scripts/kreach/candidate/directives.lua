-- kreach.candidate.directives: a candidate's CUDA source, checked before NVRTC preprocesses it. NVRTC
-- reads any file the process can read: `#include "/proc/self/environ"` puts the environment in
-- the compiler's log, `__has_include` probes for files, and an #include inside an array
-- initialiser compiles a file's bytes into the cubin. The seal (kreach.run.seal) stops that where
-- Landlock exists; this check holds everywhere, sealed or not, in two layers: this scan (early,
-- with a line number and a reason), and, for a source that passes it, NVRTC's own file calls
-- checked while it compiles (kreach.core.nvrtc's confinement: only the toolkit's headers and
-- the -I directories exist for it). NVRTC lists no opened files (no dependency output), so the
-- second layer is what agrees with its preprocessor. The scan allows only what cannot
-- reach a file outside the CUDA toolkit's headers:
--   - #include <name> and #include "name" with a literal relative name that resolves inside
--     the toolkit's include directory (or one of the candidate's -I directories, which
--     kreach.candidate.lua keeps inside it), or NVRTC's one built-in header;
--   - __has_include(...) (and _next) of such a literal name, nothing else after it;
--   - the directives define, undef, if, ifdef, ifndef, elif, elifdef, elifndef, else, endif,
--     line, error, warning, pragma (not the file-reading pragmas: include_alias, dependency);
-- and refuses #include of a macro, #include_next, #import, #embed, other directives, the
-- definition of Thrust's configuration macros and of every plain word its headers build an
-- #include name from (`tabulate`, `h`, ...: M.INCLUDE_NAME_WORDS), the toolkit's wrappers of
-- __has_include (_CCCL_HAS_INCLUDE) other than of a literal toolkit header, and any piece that
-- "__has_include" can be pasted from ("__has_", "_"): pasting builds the name, through ##
-- or through a toolkit macro that pastes (NVRTC 13.0 evaluates CAT(__has_,include)("/etc/hostname")
-- and _CCCL_PP_CAT(__has_, include)(...)).
--
-- NVRTC's preprocessor starts a line after a block comment that spans lines: in
-- `int zz; /*` newline `*/ #include "/etc/passwd"` the #include is obeyed (measured, NVRTC
-- 13.0), where the C standard's reading (the comment is one space) sees no directive. A source
-- with such a comment is read both ways.
--
-- Compilers differ on trigraphs (NVRTC honours them under --std=c++11 and earlier), raw
-- strings (C++11), digit separators (C++14): the source is scanned under each reading, and
-- refused when any reading refuses it. A backslash followed by spaces at a line's end, a
-- lone carriage return and a NUL byte are refused outright: compilers disagree on them.
local seal = require "kreach.run.seal"
local core_seal = require "kreach.core.seal"
local nvrtc = require "kreach.core.nvrtc"
local lfs = require "lfs"

local M = {}

-- Headers NVRTC 13.0 provides without a file (measured: every other name, <cstdint> and
-- <cuda_runtime.h> included, comes from the include path).
M.BUILTIN_HEADERS = { ["__nv_nvrtc_builtin_header.h"] = true }

local DIRECTIVES = { define = true, undef = true, ["if"] = true, ifdef = true, ifndef = true,
  elif = true, elifdef = true, elifndef = true, ["else"] = true, endif = true, line = true,
  error = true, warning = true, pragma = true, include = true }
local WHY_NOT = {
  include_next = "it searches the include path from an unknown place",
  import = "it is an #include",
  embed = "it reads a file's bytes",
}
-- words of the pragmas that name files (GCC's dependency, MSVC's include_alias; NVRTC 13.0
-- ignores both, measured, but a later version might not)
local FILE_PRAGMAS = { include_alias = true, dependency = true, include = true, include_next = true,
  embed = true, import = true }
-- __has_include, and the toolkit's macros that expand to it (found in the toolkit's headers;
-- directives_spec checks that the list has them all)
local HAS_INCLUDE = { __has_include = true, __has_include_next = true, __has_embed = true,
  _CCCL_HAS_INCLUDE = true }
M.HAS_INCLUDE = HAS_INCLUDE

-- the identifiers token pasting could start "__has_include" or "__has_embed" from (the
-- leftmost piece of a paste is a prefix of the word it builds, however the paste is nested)
local PASTE_PREFIX = {}
for _, w in ipairs({ "__has_include", "__has_embed" }) do
  for i = 1, #w - 1 do PASTE_PREFIX[w:sub(1, i)] = true end
end

-- The plain words Thrust's headers build computed #include names from: `#include
-- __THRUST_HOST_SYSTEM_TABULATE_HEADER`, which is <__THRUST_HOST_SYSTEM_ROOT/detail/tabulate.h>,
-- which is thrust/system/cpp/... A candidate that defines one of these words (`#define h` or
-- `-Dtabulate=`) steers that #include to a file of its choice. Every word of the replacement
-- lists that such an #include reaches, in the CUDA 13.0 toolkit (directives_spec rebuilds this
-- list from the toolkit's headers and fails when a word is missing).
M.INCLUDE_NAME_WORDS = {}
for w in ([[adjacent_difference assign_value binary_search copy copy_if count cpp cuda detail
  equal execution_policy experimental extrema fill find for_each gather generate get_value h
  inner_product iter_swap logical malloc_and_free memory memory_resource merge mismatch omp
  partition per_device_resource reduce reduce_by_key remove replace reverse scan scan_by_key
  scatter sequence set_operations sort swap_ranges system tabulate tbb temporary_buffer thrust
  transform transform_reduce transform_scan uninitialized_copy uninitialized_fill unique
  unique_by_key vector]]):gmatch("[%w_]+") do
  M.INCLUDE_NAME_WORDS[w] = true
end

local function thrust_macro(name)
  return name:match("^_*THRUST") ~= nil
end

-- Why a macro may not be defined (nil: it may).
local function define_refused(name)
  if thrust_macro(name) then
    return "Thrust's headers #include names built from its configuration macros"
  end
  if M.INCLUDE_NAME_WORDS[name] then
    return "Thrust's headers build #include names from this word (thrust/system/<...>/detail/<...>.h)"
  end
  if HAS_INCLUDE[name] or PASTE_PREFIX[name] then
    return "a piece of __has_include"
  end
end

local TRIGRAPH = { ["="] = "#", ["/"] = "\\", ["'"] = "^", ["("] = "[", [")"] = "]", ["!"] = "|",
  ["<"] = "{", [">"] = "}", ["-"] = "~" }

local RAW_PREFIX = { R = true, LR = true, uR = true, UR = true, u8R = true }
local STR_PREFIX = { L = true, u = true, U = true, u8 = true }

-- ---- translation phases 1 and 2 ----

-- Joins lines ended by a backslash. Returns the text and the positions (in it) where a line
-- was joined, for the line numbers of the original.
local function splice(s)
  local parts, joins, at = {}, {}, 1
  local out_len = 0
  while true do
    local b = s:find("\\\n", at, true)
    if not b then break end
    parts[#parts + 1] = s:sub(at, b - 1)
    out_len = out_len + (b - at)
    joins[#joins + 1] = out_len + 1
    at = b + 2
  end
  parts[#parts + 1] = s:sub(at)
  return table.concat(parts), joins
end

local function line_of(t, joins, pos)
  local _, nl = t:sub(1, pos - 1):gsub("\n", "")
  local j = 0
  for _, p in ipairs(joins) do if p <= pos then j = j + 1 end end
  return 1 + nl + j
end

-- Whether some "/*" is followed by a line end before its "*/" (or the end): over-approximate
-- (a "/*" in a string or a // comment counts too), which only adds a reading.
local function comment_spans_lines(t)
  local p = 1
  while true do
    local b = t:find("/*", p, true)
    if not b then return false end
    local e = t:find("*/", b + 2, true)
    local nl = t:find("\n", b + 2, true)
    if nl and (not e or nl < e) then return true end
    if not e then return false end
    p = e + 2
  end
end

-- ---- translation phase 3: a tokenizer of one reading ----

-- Skips spaces and comments within a line from p; returns the next position (a newline or
-- a token), and whether a // comment ended the line.
local function skip_space(t, p)
  while true do
    local q = t:find("[^ \t\v\f]", p)
    if not q then return #t + 1 end
    p = q
    if t:sub(p, p + 1) == "/*" then
      local e = t:find("*/", p + 2, true)
      if not e then return #t + 1 end
      p = e + 2
    elseif t:sub(p, p + 1) == "//" then
      return (t:find("\n", p, true) or #t + 1), true
    else
      return p
    end
  end
end

-- A header name at p ("<...>" or "\"...\"" on one line): name, quote, next position; or nil.
local function header_name(t, p)
  local c = t:sub(p, p)
  local close = c == "<" and ">" or c == '"' and '"' or nil
  if not close then return nil end
  local e = t:find(close, p + 1, true)
  local nl = t:find("\n", p + 1, true)
  if not e or (nl and nl < e) then return nil end
  return t:sub(p + 1, e - 1), c, e + 1
end

-- The end (exclusive) of a quoted literal opened at p by q; an unended one ends at the line.
local function quoted(t, p, q)
  local i = p + 1
  while true do
    local e = t:find("[\\\n" .. q .. "]", i)
    if not e then return #t + 1 end
    local c = t:sub(e, e)
    if c == "\\" then i = e + 2
    elseif c == "\n" then return e
    else return e + 1 end
  end
end

-- The end (exclusive) of a raw string whose quote is at p, or nil when it is not one.
local function raw_string(t, p)
  local delim = t:match('^"([^ ()\\\t\v\f\n]*)%(', p)
  if not delim or #delim > 16 then return nil end
  local _, e = t:find(")" .. delim .. '"', p + #delim + 2, true)
  return e and e + 1 or #t + 1
end

-- Calls on_line(tokens) for each logical line of t read under mode {raw =, sep =}. A token
-- is {k = "ident" | "number" | "string" | "punct" | "header" | "has_include", s =, at =}.
local function tokens(t, mode, on_line)
  local n, pos, line = #t, 1, {}
  local function add(k, s, at, extra)
    local tok = extra or {}
    tok.k, tok.s, tok.at = k, s, at
    line[#line + 1] = tok
  end
  local function flush()
    if #line > 0 then
      local stop = on_line(line)
      if stop then return true end
    end
    line = {}
  end
  while pos <= n do
    local c = t:sub(pos, pos)
    if c == "\n" then
      if flush() then return end
      pos = pos + 1
    elseif c:match("[ \t\v\f]") then
      pos = pos + 1
    elseif t:sub(pos, pos + 1) == "//" then
      pos = t:find("\n", pos, true) or n + 1
    elseif t:sub(pos, pos + 1) == "/*" then
      local e = t:find("*/", pos + 2, true)
      -- NVRTC's reading: a comment that spans lines ends the line it started on
      if mode.comment_nl and t:find("\n", pos + 2, true) and (not e or t:find("\n", pos + 2, true) < e) then
        if flush() then return end
      end
      pos = e and e + 2 or n + 1
    else
      local s, e = t:find("^[%a_$\128-\255][%w_$\128-\255]*", pos)
      if s then
        local id = t:sub(s, e)
        local nx = t:sub(e + 1, e + 1)
        local rend = mode.raw and nx == '"' and RAW_PREFIX[id] and raw_string(t, e + 1)
        if rend then
          add("string", t:sub(s, rend - 1), s)
          pos = rend
        elseif (nx == '"' or nx == "'") and STR_PREFIX[id] then
          local q = quoted(t, e + 1, nx)
          add("string", t:sub(s, q - 1), s)
          pos = q
        else
          add("ident", id, s)
          pos = e + 1
          local directive = #line == 2 and line[1].k == "punct" and (line[1].s == "#" or line[1].s == "%:")
          if directive and id == "include" then
            local p = skip_space(t, pos)
            local name, q, after = header_name(t, p)
            if name then
              add("header", name, p, { q = q })
              pos = after
            end
          elseif HAS_INCLUDE[id] then
            -- __has_include ( header-name ): read as the compiler reads it, raw
            local p = skip_space(t, pos)
            local tok = { bad = true }
            if t:sub(p, p) == "(" then
              local name, q, after = header_name(t, skip_space(t, p + 1))
              if name then
                local close = skip_space(t, after)
                if t:sub(close, close) == ")" then
                  tok = { name = name, q = q }
                  pos = close + 1
                end
              end
            end
            add("has_include", id, s, tok)
          end
        end
      elseif t:find("^%.?%d", pos) then
        local p = pos + 1
        while p <= n do
          local q = t:match("^[eEpP][+-]()", p) or t:match("^[%w_.$\128-\255]()", p)
            or (mode.sep and t:match("^'[%w_]()", p))
          if not q then break end
          p = q
        end
        add("number", t:sub(pos, p - 1), pos)
        pos = p
      elseif c == '"' or c == "'" then
        local q = quoted(t, pos, c)
        add("string", t:sub(pos, q - 1), pos)
        pos = q
      else
        local four, two = t:sub(pos, pos + 3), t:sub(pos, pos + 1)
        if four == "%:%:" then add("punct", "##", pos); pos = pos + 4
        elseif two == "##" then add("punct", "##", pos); pos = pos + 2
        elseif two == "%:" then add("punct", "#", pos); pos = pos + 2
        else add("punct", c, pos); pos = pos + 1 end
      end
    end
  end
  flush()
end

-- ---- the rules ----

-- Why a header name may not be included (nil: it may). ctx: include_dirs, toolkit_real.
local function header_refused(ctx, name, q)
  if name == "" then return "an empty header name" end
  if not name:match("^[%w%._%+%-/]+$") then
    return "a header name may hold only letters, digits and . _ + - /"
  end
  if name:sub(1, 1) == "/" then return "an absolute path" end
  for part in name:gmatch("[^/]+") do
    if part == ".." then return "'..' in a header name" end
  end
  if q == '"' and lfs.attributes(name) then
    return "a file of that name in the working directory would be read first"
  end
  if M.BUILTIN_HEADERS[name] then return nil end
  if not ctx.toolkit_real then return "the CUDA toolkit's include directory is not known" end
  for _, dir in ipairs(ctx.include_dirs) do
    local full = dir .. "/" .. name
    if lfs.attributes(full, "mode") == "file" then
      local r = core_seal.realpath(full)
      if r and r:sub(1, #ctx.toolkit_real + 1) == ctx.toolkit_real .. "/" then return nil end
      return ("it resolves to %s, outside the CUDA toolkit's headers"):format(tostring(r))
    end
  end
  return ("not a header of the CUDA toolkit (%s)"):format(ctx.toolkit_real)
end

local function describe(tok)
  if tok.k == "header" then return tok.q == "<" and ("<" .. tok.s .. ">") or ('"' .. tok.s .. '"') end
  return tok.s
end

-- Checks one reading of the spliced text t. Returns nil, or the position and the message of
-- the first refusal.
local function check_reading(t, mode, ctx)
  local where, why
  local paste, prefix
  local function refuse(at, msg)
    where, why = at, msg
    return true
  end
  tokens(t, mode, function(toks)
    local d, name = toks[1], toks[2]
    if d.k == "punct" and d.s == "#" and name then
      if name.k ~= "ident" then
        return refuse(d.at, "a directive must be a name (line markers such as '# 12 \"file\"' are not allowed)")
      end
      local nm = name.s
      if nm == "include" then
        local h = toks[3]
        if not h or h.k ~= "header" then
          return refuse(d.at, "#include of a name computed by a macro is not allowed: only a literal <header> or \"header\" of the CUDA toolkit")
        end
        local no = header_refused(ctx, h.s, h.q)
        if no then return refuse(d.at, ("#include %s is not allowed: %s"):format(describe(h), no)) end
      elseif nm == "define" or nm == "undef" then
        local m = toks[3]
        local no = m and m.k == "ident" and define_refused(m.s)
        if nm == "undef" and no and not thrust_macro(m.s) then no = nil end
        if no then
          return refuse(d.at, ("#%s %s is not allowed: %s"):format(nm, m.s, no))
        end
      elseif nm == "pragma" then
        for i = 3, #toks do
          if toks[i].k == "ident" and FILE_PRAGMAS[toks[i].s] then
            return refuse(d.at, ("#pragma ... %s ... is not allowed: a pragma that names files"):format(toks[i].s))
          end
        end
      elseif not DIRECTIVES[nm] then
        return refuse(d.at, ("#%s is not allowed%s"):format(nm, WHY_NOT[nm] and (": " .. WHY_NOT[nm]) or
          " (allowed: define, undef, if, ifdef, ifndef, elif, else, endif, line, error, warning, pragma, include)"))
      end
    end
    for i, tok in ipairs(toks) do
      if tok.k == "has_include" then
        if tok.bad then
          return refuse(tok.at, ("%s is allowed only as %s(<header>) or %s(\"header\") with a literal header name"):format(tok.s, tok.s, tok.s))
        end
        local no = header_refused(ctx, tok.name, tok.q)
        if no then return refuse(tok.at, ("%s(%s) is not allowed: %s"):format(tok.s, tok.q == "<" and ("<" .. tok.name .. ">") or ('"' .. tok.name .. '"'), no)) end
      elseif tok.k == "ident" and (tok.s == "_Pragma" or tok.s == "__pragma") then
        local open, lit = toks[i + 1], toks[i + 2]
        if open and open.s == "(" and lit and lit.k == "string" then
          for w in lit.s:gmatch("[%a_][%w_]*") do
            if FILE_PRAGMAS[w] then return refuse(lit.at, ("%s(%s) is not allowed: a pragma that names files"):format(tok.s, lit.s)) end
          end
        end
      elseif tok.k == "punct" and tok.s == "##" then
        paste = paste or tok.at
      elseif tok.k == "ident" and PASTE_PREFIX[tok.s] then
        prefix = prefix or tok
      end
    end
  end)
  if where then return where, why end
  if paste and (prefix or ctx.paste_prefix) then
    return (prefix and prefix.at or paste), ("token pasting (##) with '%s' in the source is not allowed: pasting can build __has_include"):format(
      prefix and prefix.s or ctx.paste_prefix)
  end
  -- without ## in the source, a toolkit macro that pastes (_CCCL_PP_CAT) builds it as well
  if prefix then
    return prefix.at, ("the identifier '%s' is not allowed: it is a piece of __has_include, which token pasting (## or a toolkit macro such as _CCCL_PP_CAT) can build"):format(prefix.s)
  end
end

-- context(options) -> what check needs: the toolkit's include directory (resolved), the
-- include directories the options add (kreach.candidate.lua keeps them inside the toolkit), and
-- what -D options define.
function M.context(options)
  local root = seal.toolkit_root()
  local inc = root and root .. "/include"
  local ctx = { include_dirs = {}, toolkit_real = inc and core_seal.realpath(inc) or nil, defines = {} }
  for _, o in ipairs(options or {}) do
    local dir = o:match("^%-I(.+)$") or o:match("^%-%-include%-path=(.+)$")
    if dir then ctx.include_dirs[#ctx.include_dirs + 1] = dir end
    local name, value = o:match("^%-D([%a_][%w_]*)=?(.*)$")
    if name then ctx.defines[#ctx.defines + 1] = { name = name, value = value } end
  end
  if inc then ctx.include_dirs[#ctx.include_dirs + 1] = inc end
  return ctx
end

-- check(source, ctx) -> true, or nil, the line of the source and why it is refused. ctx from
-- M.context (nil: M.context{}). A source that passes is marked for NVRTC's confinement
-- (kreach.core.nvrtc.confine_source): every later build of it in this process runs with
-- NVRTC's own file calls checked, so that what this scan misreads still reaches nothing outside
-- the toolkit's headers and the -I directories (a missing file to NVRTC, whatever the path).
function M.check(source, ctx)
  ctx = ctx or M.context({})
  for _, d in ipairs(ctx.defines) do
    local no = define_refused(d.name)
    if no then
      return nil, 0, ("-D%s is not allowed: %s"):format(d.name, no)
    end
    for w in d.value:gmatch("[%a_][%w_]*") do
      if HAS_INCLUDE[w] or w == "_Pragma" then
        return nil, 0, ("-D%s=%s is not allowed: %s in a macro"):format(d.name, d.value, w)
      end
      if PASTE_PREFIX[w] then
        return nil, 0, ("-D%s=%s is not allowed: '%s' is a piece of __has_include, which token pasting can build"):format(d.name, d.value, w)
      end
    end
  end
  local function at_line(s, p) local _, n = s:sub(1, p - 1):gsub("\n", ""); return n + 1 end
  local p = source:find("\0", 1, true)
  if p then return nil, at_line(source, p), "a NUL byte in the source" end
  local src = source:gsub("\r\n", "\n")
  p = src:find("\r", 1, true)
  if p then return nil, at_line(src, p), "a carriage return that does not end a line" end
  for _, tri in ipairs({ false, true }) do
    local s = tri and src:gsub("%?%?([=/'()!<>%-])", TRIGRAPH) or src
    p = s:find("\\[ \t\v\f]+\n")
    if p then
      return nil, at_line(s, p), "a backslash followed by spaces at the end of a line (compilers disagree on whether it joins the lines)"
    end
    local t, joins = splice(s)
    -- a block comment that holds a line end: read it as NVRTC does as well
    local nl_comment = comment_spans_lines(t)
    for _, cnl in ipairs(nl_comment and { false, true } or { false }) do
      for _, raw in ipairs({ false, true }) do
        for _, sep in ipairs({ false, true }) do
          local where, why = check_reading(t, { raw = raw, sep = sep, comment_nl = cnl }, ctx)
          if where then return nil, line_of(t, joins, where), why end
        end
      end
    end
  end
  nvrtc.confine_source(source)
  return true
end

return M
