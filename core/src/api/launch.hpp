// The checks of a kernel launch, shared by Queue::launch, Recording::launch and Graph::set_arg.
#pragma once

#include <cstddef>

#include "gpurt/plugin/abi.h"
#include "gpurt/queue.hpp"
#include "model/state.hpp"

namespace gpurt::detail {

// A launch's arguments as the call made them (gpurt/queue.hpp): `native`, count + 1 slots, is the
// array the plugin receives; `checks`, count entries, what only the checks read.
struct LaunchArgs {
  gpurt_kernel_arg* native;
  const ArgCheck* checks;
  std::size_t count;
};

// What the plugin is given besides the arguments: how many (the call's, or one more for a
// dynamic-local-memory parameter) and the shape, in the ABI's form.
struct PreparedLaunch {
  std::size_t count = 0;
  gpurt_launch_shape shape{};
};

// Checks a launch of `k` with `config` and `args` on device `d` as Queue::launch does (shape and
// limits, local memory, argument count, kinds, types, devices, ranges, view alignment), then
// completes `args.native` in place (each buffer's handle; the dynamic-local parameter in the spare
// slot) and fills `out`; throws the Error naming `call` on the first problem. Builds no string
// unless a check fails.
void prepare_launch(DeviceState* d, KernelState* k, const LaunchConfig& config, const LaunchArgs& args,
                    const char* call, PreparedLaunch& out);

}  // namespace gpurt::detail
