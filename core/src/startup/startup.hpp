// Start-up: the environment is read once, here, and each component is handed its typed settings
// (startup/env.hpp). Start-up is the top layer of core/src and the one that wires the others: the
// loader, the compile cache and default_device take theirs when first used, through the sources
// start-up installs (startup.cpp); logging, tracing and the transfer engine are configured by
// start-up itself, before anything else runs.
#pragma once

#include "startup/env.hpp"

namespace gpurt::detail::startup {

// The process's settings. The first call that succeeds reads the environment and starts gpurt:
// it sets the log threshold (GPURT_LOG), starts the trace (GPURT_TRACE; a refused file is logged,
// not thrown) and sets the transfer engine's staging (GPURT_STAGING, GPURT_STAGING_THREADS). Later
// calls return the same settings without reading the environment. A malformed variable (a backend
// name included: GPURT_DEVICE and GPURT_DISABLE_BACKENDS must name a plugin found) throws
// Error(invalid_argument) naming it and its accepted form; then nothing is kept or configured, and
// the next call reads the environment again. Thread-safe.
const Settings& settings();

}  // namespace gpurt::detail::startup
