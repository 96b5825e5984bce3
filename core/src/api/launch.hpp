// The checks of a kernel launch, shared by Queue::launch, Recording::launch and Graph::set_arg.
#pragma once

#include <cstddef>

#include "model/state.hpp"
#include "gpurt/queue.hpp"

namespace gpurt::detail {

// A launch in the form the plugin takes: native arguments (one more than the kernel's arguments
// for a dynamic-local parameter) and the shape. Scalar values point into the Args it was made from.
struct PreparedLaunch {
  bridge::KernelArg native[max_kernel_args + 1];  // the first `count` are set
  std::size_t count = 0;
  bridge::LaunchShape shape;
};

// Checks a launch of `k` with `config` and `args` on device `d` as Queue::launch does (shape and
// limits, local memory, argument count, kinds, types, devices, ranges, view alignment) and fills
// `out`; throws the Error naming `call` on the first problem.
void prepare_launch(DeviceState* d, KernelState* k, const LaunchConfig& config, const Arg* args, std::size_t count,
                    const char* call, PreparedLaunch& out);

}  // namespace gpurt::detail
