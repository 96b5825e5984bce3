// The library's targets for the kernel rows, as fractions of the device's copy bandwidth (bytes
// read + written per second against the raw API's device-to-device copy): shared by the bench
// (which writes them into each row) and `gpurt bench --render` (which applies them to runs from
// without matmul rows, which carry none).
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace gpurt::bench {

// On GPUs (and other devices that are not CPUs): scan >= 0.85, histogram (256 bins) >= 0.8,
// conv2d 5x5 >= 0.85, transpose >= 0.9, and copy, fill, axpy and reduce >= 0.9 (the earlier
// targets, kept); softmax and layer norm over rows of 1,024 (float, half and bfloat16) >= 0.8. On CPU devices: the streaming kernels (copy, fill, axpy, binary, reduce) >= 0.5;
// scan, transpose and conv2d are held against an OpenMP loop instead (openmp_ratio). Null: none.
inline nlohmann::json kernel_target(const std::string& name, bool cpu_device) {
  static const std::map<std::string, double> gpu{{"copy", 0.9},           {"fill", 0.9},
                                                 {"axpy", 0.9},           {"reduce_sum", 0.9},
                                                 {"scan_inclusive", 0.85}, {"histogram_256", 0.8},
                                                 {"conv2d_5x5", 0.85},    {"transpose", 0.9},
                                                 {"softmax_rows_1024", 0.8}, {"layer_norm_rows_1024", 0.8},
                                                 {"softmax_rows_1024_half", 0.8}, {"layer_norm_rows_1024_half", 0.8},
                                                 {"softmax_rows_1024_bf16", 0.8}, {"layer_norm_rows_1024_bf16", 0.8}};
  static const std::map<std::string, double> cpu{
      {"copy", 0.5}, {"fill", 0.5}, {"axpy", 0.5}, {"binary_add", 0.5}, {"reduce_sum", 0.5}};
  const auto& targets = cpu_device ? cpu : gpu;
  const auto it = targets.find(name);
  return it == targets.end() ? nlohmann::json() : nlohmann::json(it->second);
}

}  // namespace gpurt::bench
