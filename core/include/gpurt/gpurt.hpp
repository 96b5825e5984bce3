// The one header an application includes; the kernel library is not in it: include
// <gpurt/library.hpp> and link gpurt::lib (CMake) or gpurt-lib (pkg-config) for gpurt::lib.
#pragma once

// gpurt is C++17 or newer. gpurt::gpurt (CMake) states this itself; with pkg-config, which leaves the
// standard to the application, a compiler that defaults to an older one needs -std=c++17 (or newer).
#if __cplusplus < 201703L
#error "gpurt needs C++17 or newer: compile with -std=c++17 (or -std=c++20, ...); gpurt.pc leaves the standard to you"
#endif

#include "gpurt/buffer.hpp"
#include "gpurt/cache.hpp"
#include "gpurt/device.hpp"
#include "gpurt/error.hpp"
#include "gpurt/event.hpp"
#include "gpurt/graph.hpp"
#include "gpurt/launch.hpp"
#include "gpurt/native.hpp"
#include "gpurt/program.hpp"
#include "gpurt/queue.hpp"
#include "gpurt/runtime.hpp"
#include "gpurt/trace.hpp"
#include "gpurt/transfer.hpp"
#include "gpurt/types.hpp"
#include "gpurt/version.hpp"
