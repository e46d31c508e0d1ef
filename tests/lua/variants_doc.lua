-- Writes the table of the operators' size-selected variants (each family's declared `variants`,
-- kreach.ops.variants) with the case of tests/lua/values.lua's VARIANT_CASES that checks each
-- into docs/correctness.md, between its two markers; with --check, writes nothing and exits 1
-- when the committed table differs (tests/lua/variants_declared_spec.lua checks the same).
--   build/kreach tests/lua/variants_doc.lua [--check] [docs/correctness.md]
local here = (arg and arg[0] and arg[0]:match("^(.*)/[^/]*$")) or "."
package.path = here .. "/?.lua;" .. package.path
local ops = require "kreach.ops"
local values = require "values"

local M = {}
M.BEGIN = "<!-- variants: written by tests/lua/variants_doc.lua from kreach.ops' declared variants; do not edit -->"
M.END = "<!-- end of variants -->"

local function sizes_text(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for _, k in ipairs(keys) do parts[#parts + 1] = ("%s %s"):format(k, tostring(t[k])) end
  return table.concat(parts, ", ")
end

-- markdown() -> the table: each declared variant, when it is taken, and the first case that
-- is there for it (its problem, sizes, dtypes and lowered limits), or why it is not checked
function M.markdown()
  local by = {}
  for _, c in ipairs(values.VARIANT_CASES) do
    for _, v in ipairs(c.reaches) do by[v] = by[v] or c end
  end
  local lines = { "| family | variant | taken when | checked at |", "|---|---|---|---|" }
  for _, v in ipairs(ops.variants()) do
    local at
    if v.alignment then at = "not checked: selected by alignment, not by size"
    elseif v.unreachable then at = "not checked: " .. v.unreachable
    else
      local c = by[v.id]
      if c then
        local lim = {}
        for fam, t in pairs(c.limits or {}) do for k, x in pairs(t) do lim[#lim + 1] = ("%s.%s = %s"):format(fam, k, tostring(x)) end end
        table.sort(lim)
        at = ("%s, %s (%s)%s"):format(c.problem, sizes_text(c.sizes), table.concat(c.dtypes or { "f32" }, ", "),
          #lim > 0 and (", limit " .. table.concat(lim, ", ")) or "")
      else
        at = "**no case**"
      end
    end
    lines[#lines + 1] = ("| %s | `%s` | %s | %s |"):format(v.family, v.name, (v.when:gsub("|", "\\|")), (at:gsub("|", "\\|")))
  end
  return table.concat(lines, "\n") .. "\n"
end

-- with_table(text) -> text with the table between the markers, or nil and why
function M.with_table(text)
  local a, b = text:find(M.BEGIN, 1, true)
  local c = text:find(M.END, 1, true)
  if not a or not c or c < b then return nil, "the markers are not in the file" end
  return text:sub(1, b) .. "\n" .. M.markdown() .. text:sub(c)
end

-- run as a script: kreach tests/lua/variants_doc.lua [--check] [path]
if arg and arg[0] and arg[0]:match("variants_doc%.lua$") then
  local check = arg[1] == "--check"
  local path = arg[check and 2 or 1] or (here .. "/../../docs/correctness.md")
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  local new, why = M.with_table(text)
  if not new then io.stderr:write(path .. ": " .. why .. "\n"); os.exit(1) end
  if check then
    if new ~= text then io.stderr:write(path .. ": the variants' table is out of date\n"); os.exit(1) end
  elseif new ~= text then
    f = assert(io.open(path, "wb"))
    f:write(new)
    f:close()
  end
  os.exit(0)
end

return M
