-- kreach.text: making untrusted text safe to show and to store. Every string a candidate (or
-- its file name, its manifest, its compiler log, its worker's standard error) provides is
-- bounded and stripped of terminal control characters before it reaches a terminal, the
-- results database or an export: a reason that holds "\r\27[1A\27[2K" must not paint a fake
-- `ok` over the real verdict, and a 256 MiB message must not fill a database row.
local M = {}

-- The default bound of one untrusted string, in bytes.
M.MAX_BYTES = 64 * 1024

-- C0 controls other than tab and newline, DEL, the C1 controls in their UTF-8 form
-- (U+0080..U+009F, which some terminals obey as CSI and OSC introducers) and the bidirectional
-- controls (U+202E, the right-to-left override, and its kin), written visibly.
local function visible(c)
  return ("\\x%02x"):format(c:byte())
end

-- clean(s, max_bytes) -> s with control characters made visible ("\x1b", "\u202e") and, when longer
-- than max_bytes (default M.MAX_BYTES), cut to that many bytes with a note of how many were
-- left out. Non-strings pass through tostring first; nil stays nil.
function M.clean(s, max_bytes)
  if s == nil then return nil end
  if type(s) ~= "string" then s = tostring(s) end
  max_bytes = max_bytes or M.MAX_BYTES
  local cut = 0
  if #s > max_bytes then
    local n = #s
    -- do not leave half a UTF-8 sequence at the end
    s = s:sub(1, max_bytes):gsub("[\xC0-\xFF][\x80-\xBF]*$", "")
    cut = n - #s
  end
  s = s:gsub("[\0-\8\11-\31\127]", visible)
  s = s:gsub("\xC2([\x80-\x9F])", function(c) return ("\\u%04x"):format(c:byte()) end)
  -- bidirectional controls (U+200E, U+200F, U+202A..U+202E, U+2066..U+2069, U+061C): a
  -- right-to-left override shows a line's bytes in another order than they are
  s = s:gsub("\xE2([\x80\x81])([\x80-\xBF])", function(b, c)
    local cp = 0x2000 | ((b:byte() & 0x3F) << 6) | (c:byte() & 0x3F)
    if cp == 0x200E or cp == 0x200F or (cp >= 0x202A and cp <= 0x202E) or (cp >= 0x2066 and cp <= 0x2069) then
      return ("\\u%04x"):format(cp)
    end
  end)
  s = s:gsub("\xD8\x9C", "\\u061c")
  if cut > 0 then s = s .. ("... (%d more bytes not shown)"):format(cut) end
  return s
end

-- continued(s, indent) -> s with each line after the first written after `indent .. "| "`: a
-- text of several lines (a reason, a compiler log) printed under a verdict, whose later lines
-- cannot pass for a line of kreach's own ("x.lua: ok (dry run ...)", a verdict). The first
-- line is the caller's to place.
function M.continued(s, indent)
  return (tostring(s):gsub("\r?\n", "\n" .. (indent or "") .. "| "))
end

-- one_line(s) -> s with its line breaks written " | ", for a cell or a line that must stay one.
function M.one_line(s)
  return (tostring(s):gsub("\r?\n", " | "))
end

-- clean_all(v, max_bytes) -> a copy of v (a plain table from JSON, or a string) with every
-- string, keys included, cleaned. Tables nested deeper than 64 levels are cut off.
function M.clean_all(v, max_bytes, depth)
  depth = depth or 0
  if type(v) == "string" then return M.clean(v, max_bytes) end
  if type(v) ~= "table" then return v end
  if depth > 64 then return "(nested too deeply)" end
  local r = {}
  for k, x in pairs(v) do
    r[type(k) == "string" and M.clean(k, 256) or k] = M.clean_all(x, max_bytes, depth + 1)
  end
  return setmetatable(r, getmetatable(v))
end

-- csv_cell(s): a cell a spreadsheet will not run: text that starts with =, +, -, @ (or a tab
-- or carriage return, which some spreadsheets skip before looking) gets a leading apostrophe.
-- Numbers are not text and pass as they are.
function M.csv_cell(s)
  if type(s) ~= "string" then return s end
  if s:match("^[=+%-@\t\r]") then return "'" .. s end
  return s
end

-- Levenshtein distance between two strings (bytes).
function M.distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a:sub(i, i) == b:sub(j, j) and 0 or 1))
    end
    prev = cur
  end
  return prev[#b]
end

-- suggest(word, names) -> the name closest to a misspelt word (at most 2 edits away, the
-- first in sorted order among equals), or nil: for "did you mean".
function M.suggest(word, names)
  local sorted = {}
  for i, n in ipairs(names) do sorted[i] = n end
  table.sort(sorted)
  local best, bd = nil, 3
  for _, n in ipairs(sorted) do
    local d = M.distance(word, n)
    if d < bd then best, bd = n, d end
  end
  return best
end

-- shell_quote(s) -> s as one word for sh: in single quotes, a ' inside written '\''
function M.shell_quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- shell_word(s) -> s as one shell word: as it is where it holds nothing a shell would read, else
-- quoted (shell_quote): readable command lines (kreach slurm's scripts, --collect --dry-run)
function M.shell_word(s)
  s = tostring(s)
  if s ~= "" and s:match("^[%w%./_%-=:,+@%%]+$") then return s end
  return M.shell_quote(s)
end

return M
