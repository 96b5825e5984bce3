// The measurements behind `gpurt bench`: gpurt and the raw vendor API side by side on one device,
// in one process, as a JSON document (rendered as a table, CSV and SVG by tools/bench.cpp).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpurt/gpurt.hpp"
#include "gpurt/library.hpp"

namespace gpurt::bench {

struct Options {
  bool quick = false;  // fewer sizes and repetitions (CI)
  std::function<void(const std::string&)> progress;  // called with what is being measured
};

nlohmann::json run(const Device& device, const Options& options);

}  // namespace gpurt::bench
