// The dialect rows of `gpurt bench`: portable kernels that use the dialect's sub-group words and
// vector types against the same work written natively for the device's backend - CUDA C++ on CUDA
// (warp intrinsics, CUDA's float4), OpenCL C on OpenCL (what portable OpenCL C writes without a
// sub-group extension: a local-memory tree; OpenCL's float4) - both built and launched through
// gpurt, so the ratio measures the kernel code the prelude produces, not the runtime.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpurt/gpurt.hpp"

namespace gpurt::bench {

// {"elements", "trials", "rows": [{"name", "what", "native", "portable_ms", "native_ms",
// "portable_gbps", "native_gbps", "ratio", "ratio_low", "ratio_high"}]}: device time (events on
// `timed`) of `reps` back-to-back launches per trial, portable and native alternating in each
// trial; ratio = portable time / native time per trial (median, lowest, highest). Every result is
// checked against the CPU first: a wrong one is {"wrong": ...} in its row instead of figures.
nlohmann::json measure_dialect_rows(const Device& device, Queue& timed, bool quick, int trials,
                                    const std::function<void(const std::string&)>& say);

}  // namespace gpurt::bench
