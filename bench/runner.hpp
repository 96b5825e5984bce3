// The measurements behind `gpurt bench`: gpurt and the raw vendor API side by side on one device,
// in one process, as a JSON document (rendered as a table, CSV, SVG and Markdown by render.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpurt/gpurt.hpp"
#include "gpurt/library.hpp"

namespace gpurt::bench {

struct Options {
  bool quick = false;  // fewer sizes and repetitions (CI)
  // Trials per row, gpurt and raw alternating (gpurt bench --trials); 0: 7, or 3 with quick.
  int trials = 0;
  std::function<void(const std::string&)> progress;  // called with what is being measured
  // The other devices selected in the same run (gpurt bench -d a,b): the copy between devices is
  // measured with the first of them of another backend, or of this backend without peer access
  // (another OpenCL context); none: the first device of another backend in gpurt::devices().
  std::vector<Device> partners;
  // The sections to measure (gpurt bench --sections), by their JSON names: launch, launch_scaling,
  // alloc, transfers, staging_threads, build, kernels, kernel_baselines, matmul, interop, graph,
  // dialect.
  // Empty: all of them. A run of some sections holds only those (and the run's description).
  std::vector<std::string> sections;
};

// The names Options::sections takes, in the order a run measures them.
const std::vector<std::string>& section_names();

nlohmann::json run(const Device& device, const Options& options);

}  // namespace gpurt::bench
