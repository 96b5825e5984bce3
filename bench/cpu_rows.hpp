// Baselines for the library's kernels ("CPU devices"), under the bench JSON key
// "kernel_baselines":
//  - "naive": on every device, each streaming call (copy, fill, axpy, binary add, reduce sum, and
//    histogram of 256 bins with one global atomic per element)
//    against a naive portable kernel of the same operation - one work-item per element, the group
//    size the backend suggests (LaunchConfig::cover) - on the same buffers, timed the same way
//    (device time of `batch` calls between two events, median of the trials);
//  - "openmp": on CPU devices (DeviceProperties::type == DeviceType::cpu), scan, transpose,
//    conv2d 5x5 and fp32 matmul against a straightforward OpenMP loop on the host's cores, same
//    sizes, reported as library time / OpenMP time; elsewhere {"skipped": why}.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpurt/gpurt.hpp"

namespace gpurt::bench {

// side: the kernel rows' matrix side (n = side^2 floats); matmul_n: the matmul row's size; say: the
// progress lines (Options::progress), one per group of rows.
nlohmann::json measure_kernel_baselines(const Device& device, Queue& timed, std::size_t side, std::size_t matmul_n,
                                        int trials, int batch, const std::function<void(const std::string&)>& say);

}  // namespace gpurt::bench
