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
// Work that other code enqueues on a gpurt queue's native queue (a vendor library, the application's
// own native calls: gpurt/native.hpp) is invisible to gpurt; a TraceSpan around it puts it in the
// trace (below).
//
// Names in the trace. Every text the trace records - a TraceSpan's name, a ProgramSource::name, a
// Recording's name, a kernel name, a device description - is recorded up to its first NUL byte and
// written so that the file is always valid JSON in UTF-8: valid UTF-8 (RFC 3629: "é", "日本") is kept
// byte for byte, with quotes, backslashes and control characters escaped as JSON needs (they read
// back unchanged); each byte that is not part of a valid UTF-8 sequence (0xFF, a lone continuation
// byte such as 0x80, each byte of a truncated sequence, of an overlong form such as 0xC0 0xAF, or
// of a surrogate) is written as the four characters \xHH, HH its value in uppercase hex
// (the bytes 'a', 0xFF, 'b' read back from the JSON as the five characters a\xFFb; the file itself
// holds "a\\xFFb", its backslash escaped). Such a name never makes stop_trace() fail.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace gpurt {

class Queue;

// Starts a trace that will be written to `path` (replacing a trace already running, which is
// written first). Throws Error(invalid_argument) for an empty path, or when `path` is a symbolic
// link, a directory or anything else that is not a regular file, a character device or a FIFO.
// The trace is also written at exit if stop_trace() is not called.
void start_trace(const std::string& path);
// Waits for the traced device work, writes the file and stops tracing; returns the number of
// events written (0 when no trace was running). A new or regular file is replaced atomically
// through a temporary file created exclusively beside it (never through a link; a regular file
// replaced keeps its permission bits); a character
// device or FIFO is written directly, never replaced. Tracing stops either way; a path that became
// a link, a directory or a FIFO with no reader is Error(invalid_argument), a failed write
// Error(internal).
std::size_t stop_trace();
bool tracing();

// A span of foreign work on a gpurt queue: work enqueued on the queue's native queue (the CUstream
// or cl_command_queue of native_handle(queue)) by code other than gpurt - a vendor library (the
// kernel library's cuBLAS and CLBlast calls use it) or the application's own native calls. Make one
// just before enqueueing that work and let it go right after:
//
//   { gpurt::TraceSpan span(queue, "my SGEMM"); cublasSgemm(...); }  // on gpurt::cuda::stream(queue)
//
// While a trace runs it records a host span `name` on the calling thread's track (from construction
// to destruction) and, on a queue with timing (the default), a device span `name` on the queue's
// track: from a timed marker it enqueues on the queue when constructed to one it enqueues when
// destroyed. The queue runs in order, so the device span covers exactly the work enqueued on the
// queue in between - the foreign work, and any gpurt work enqueued on the same queue meanwhile. A
// span destroyed by an exception, or after failed(), is marked failed. GPURT_LOG=debug logs it like
// any call. While tracing and debug logging are off it enqueues nothing, allocates nothing and
// costs one relaxed atomic load. Construction throws Error(invalid_argument) for an empty queue and
// nothing else (tracing never breaks the work it traces); the destructor never throws. The span
// keeps the queue's state alive until it is destroyed; it is not copyable or movable.
class TraceSpan {
 public:
  // `name` is copied only while tracing, up to its first NUL character (the trace and the log record
  // that much; the trace writes its bytes as "Names in the trace" above says).
  TraceSpan(const Queue& queue, std::string_view name);
  ~TraceSpan();
  TraceSpan(const TraceSpan&) = delete;
  TraceSpan& operator=(const TraceSpan&) = delete;
  // Marks the span as failed in the trace (for foreign work that reported its failure by status
  // rather than by an exception).
  void failed() noexcept;

 private:
  struct State;
  State* state_ = nullptr;  // owned; null while tracing and debug logging are off
};

}  // namespace gpurt
