// The differential check: the same pipeline's outputs from every device, compared with a CPU
// reference and with each other, bit-exact for integers and within a stated bound for floats.
#pragma once

#include <string>
#include <vector>

namespace gpurt::test {

struct DeviceResult {
  std::string device;          // "opencl:1 (NVIDIA H200)"
  std::vector<double> values;  // the output, widened (exact for 32-bit integers)
};

struct Comparison {
  bool agree = true;
  double largest_difference = 0;  // exact: absolute; bounded: in units of the per-element scale
  std::string worst;              // where the largest difference is, and the two values
  std::string report;             // one line per device, plus pairs of devices
};

// Integers: every device must equal the reference exactly.
Comparison compare_exact(const std::vector<double>& reference, const std::vector<DeviceResult>& results);

// Floating point: |value - reference| <= bound * scale[i] for every element of every device;
// scale[i] is the magnitude the error is measured against (e.g. sum of |terms|).
Comparison compare_bounded(const std::vector<double>& reference, const std::vector<double>& scale, double bound,
                           const std::vector<DeviceResult>& results);

}  // namespace gpurt::test
