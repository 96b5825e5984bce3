// The graph rows of `gpurt bench`: what one kernel of a recorded chain costs when the
// chain is replayed (Recording once, Queue::replay repeated, one finish), against the same kernels
// launched one by one through gpurt and through the raw API, and on CUDA a raw CUDA graph of the
// chain. Chains: 10, 100 and 1,000 empty kernels and one 3-kernel step over 1024 floats.
#pragma once

#include <nlohmann/json.hpp>

#include "runner.hpp"

namespace gpurt::bench {

// {"kernels_per_measurement", "trials", "rows": [...]} (docs/PERFORMANCE.md describes each
// field), or {"skipped": why} when gpurt cannot record or replay on `device`. `trials` measurements
// of each figure, gpurt and raw alternating.
nlohmann::json measure_graph_rows(const Device& device, const Options& options, int trials);

}  // namespace gpurt::bench
