// What every conformance case starts from: the device under test, a queue, and its kernels.
#pragma once

#include "harness.hpp"
#include "kernels.hpp"

namespace gpurt::test {

struct Fixture {
  Device dev = device_under_test();
  Queue q = dev.create_queue();
  Program program() const { return build_for(dev, opencl_kernels, cuda_kernels, "conformance"); }
};

// Sizes that do and do not divide typical group sizes.
inline const std::size_t odd_sizes[] = {1, 2, 7, 31, 255, 256, 257, 1021, 4099, 65537};

}  // namespace gpurt::test
