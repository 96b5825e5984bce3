// Timeline tracing: a Chrome trace (open it in https://ui.perfetto.dev or chrome://tracing) of
// every program build, allocation, copy, fill, launch, wait and finish. Host calls appear on one
// track per host thread; the device-side execution of each command (from timed CUDA events or
// OpenCL profiling) on one track per queue, on the same clock as the host calls.
//
// GPURT_TRACE=trace.json starts tracing when the runtime starts and writes the file at exit;
// start_trace()/stop_trace() do the same from code. While tracing is off each call costs one
// relaxed atomic load. While it is on, each command records two timed events, and the first
// command on each device waits once to line the device clock up with the host's.
// Device spans need queues with timing enabled (the default); commands on queues created with
// Timing::disabled appear on the host track only.
#pragma once

#include <cstdint>
#include <string>

namespace gpurt {

// Starts a trace that will be written to `path` (replacing a trace already running, which is
// written first). Throws Error(invalid_argument) for an empty path, or when `path` is a symbolic
// link, a directory or anything else that is not a regular file, a character device or a FIFO.
// The trace is also written at exit if stop_trace() is not called.
void start_trace(const std::string& path);
// Waits for the traced device work, writes the file and stops tracing; returns the number of
// events written (0 when no trace was running). A new or regular file is replaced atomically
// through a temporary file created exclusively beside it (never through a link); a character
// device or FIFO is written directly, never replaced. Tracing stops either way; a path that became
// a link, a directory or a FIFO with no reader is Error(invalid_argument), a failed write
// Error(internal).
std::size_t stop_trace();
bool tracing();

}  // namespace gpurt
