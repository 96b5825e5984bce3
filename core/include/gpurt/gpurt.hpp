// The one header an application includes.
#pragma once

#include "gpurt/baseline.hpp"
#include "gpurt/buffer.hpp"
#include "gpurt/cache.hpp"
#include "gpurt/device.hpp"
#include "gpurt/error.hpp"
#include "gpurt/event.hpp"
#include "gpurt/launch.hpp"
#include "gpurt/library.hpp"
#include "gpurt/program.hpp"
#include "gpurt/queue.hpp"
#include "gpurt/runtime.hpp"
#include "gpurt/trace.hpp"
#include "gpurt/transfer.hpp"
#include "gpurt/types.hpp"
#include "gpurt/version.hpp"
