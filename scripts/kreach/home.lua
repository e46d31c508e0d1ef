-- kreach.home: where kreach finds the files that ship beside its source rather than inside the
-- binary (problems/, experiments/models/). First beside or above the binary's directory (a
-- build tree inside the checkout: build/kreach finds build/../problems) and the install
-- prefix's share/kreach/ (cmake --install); only when none of those has them, the source tree
-- the build was configured from (kreach.core.source_dir), for a build directory outside the
-- tree (cmake -S . -B /elsewhere). $KREACH_SOURCE_DIR replaces that last place; set empty,
-- there is none. Requires only kreach.core and lfs.
local core = require "kreach.core"
local lfs = require "lfs"

local M = {}

local function is_dir(p) return lfs.attributes(p, "mode") == "directory" end

-- The source tree to fall back to, or nil.
function M.source_dir()
  local env = os.getenv("KREACH_SOURCE_DIR")
  if env then return env ~= "" and env or nil end
  return core.source_dir
end

-- dirs(rel, installed) -> found, looked: the directories holding `rel` (a path in the source
-- tree, "problems" or "experiments/models") for this binary, in the order to search them, and
-- every place looked at (for a message saying where). `installed` is its name under an install
-- prefix's share/kreach/.
function M.dirs(rel, installed)
  local found, looked = {}, {}
  local function try(p)
    looked[#looked + 1] = p
    if is_dir(p) then found[#found + 1] = p end
  end
  local ok, exe = pcall(core.executable)
  if ok then
    local dir = exe:match("^(.*)/[^/]*$") or "."
    for _, up in ipairs({ "/", "/../", "/../../" }) do try(dir .. up .. rel) end
    try(dir .. "/../share/kreach/" .. installed)
  end
  local src = M.source_dir()
  if #found == 0 and src then try(src .. "/" .. rel) end
  return found, looked
end

return M
