-- kreach.judge.modes.graph: a timing mode (docs/timing.md). One call on each input set is
-- captured once in a CUDA graph, each between two events of its own (the preparation outside
-- them), and replayed; a sample is the mean of the replay's calls (launch overhead gone; for
-- kernels under about 10 us). Every round calls each set; no gate (the replay is one launch);
-- nothing outside kreach's process can be in the graph. The fields are kreach.judge.modes's.
local M = {
  name = "graph",
  flush = false,
  gated = false,
  poison_baseline_for_candidate = false,
  foreign = false,
  no_candidate = "graph mode replays kreach's own CUDA graph, which cannot hold a call into the Python worker",
  no_pytorch = "PyTorch is not timed in graph mode (a replay of kreach's graph has no PyTorch call in it)",
}

-- Captures one call on each input set into a graph: before each call its preparation, then an
-- event, the call, an event (record nodes of the graph), so that a replay times each call apart
-- from the preparation, as cold and hot modes do.
function M.setup(s, sets, dev)
  s.graph_ev = {}
  for i = 1, 2 * sets do s.graph_ev[i] = dev.event() end
  dev.graph_begin()
  local ok, err = pcall(function()
    for k = 1, sets do
      if s.prepare then s.prepare(k) end
      s.graph_ev[2 * k - 1]:record()
      s.call(k)
      s.graph_ev[2 * k]:record()
    end
  end)
  if not ok then
    dev.graph_abort()
    error(("%s: the call failed while being captured in a CUDA graph: %s"):format(s.name, tostring(err)), 0)
  end
  local g, why = dev.graph_end()
  if not g then error(("%s: %s"):format(s.name, why), 0) end
  s.graph = g
  s.graph_nodes = g:nodes()
end

function M.teardown(s)
  if s.graph then s.graph:free(); s.graph = nil end
  for _, e in ipairs(s.graph_ev or {}) do e:free() end
  s.graph_ev = nil
end

-- one replay: one call on each set, the sample the mean of their times
function M.sample(sampler, s)
  s.graph:launch()
  local sum = 0
  for k = 1, sampler.sets do sum = sum + s.graph_ev[2 * k - 1]:elapsed_ms(s.graph_ev[2 * k]) end
  return sum / sampler.sets
end

-- a replay calls each set once
function M.round_sets(_, sets)
  local all = {}
  for k = 1, sets do all[k] = k end
  return all
end

return M
