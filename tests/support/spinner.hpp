// A kernel that runs for as long as a case asks, on every device that runs the suite's own portable
// kernels (contract_waits.cpp, contract_queue_attack.cpp): long enough to catch a wait that does not
// wait, or a bounded wait that waits too long, and always ending on its own.
#pragma once

#include <chrono>
#include <cstdint>

#include "fixture.hpp"

namespace gpurt::test {

// One work-item adds 1 to a volatile global counter `iterations` times: every step is a load and
// a store the compiler must keep, so the kernel runs for a time proportional to `iterations` and
// then ends on its own. (Never a kernel that spins forever: on PoCL it would block the process.)
inline const char* spin_source = R"(
GPURT_KERNEL void spin(GPURT_GLOBAL volatile uint64_t* counter, uint64_t iterations) {
  if (gpurt_global_id(0) != 0) return;
  for (uint64_t i = 0; i < iterations; ++i) counter[0] = counter[0] + 1;
}
)";

struct Spinner {
  Device dev;
  Kernel kernel;
  Buffer<std::uint64_t> counter;
  std::uint64_t long_run = 0;  // iterations that take about a second on this device

  explicit Spinner(const Device& d)
      : dev(d),
        kernel(d.build({SourceLanguage::portable, spin_source, "spin.gpurt"}).kernel("spin")),
        counter(d.alloc<std::uint64_t>(1)) {
    // Calibration (a measurement, not an assertion): after a first run (which may compile the
    // kernel for its shape), double the count until one run takes 50 ms, then scale to about one
    // second, so that the long run ends on its own on every device.
    Queue q = d.create_queue();
    start(q, 1);
    q.finish();
    using clock = std::chrono::steady_clock;
    std::uint64_t n = 1 << 12;
    double seconds = 0;
    for (;;) {
      const auto t0 = clock::now();
      start(q, n);
      q.finish();
      seconds = std::chrono::duration<double>(clock::now() - t0).count();
      if (seconds >= 0.05 || n >= (std::uint64_t(1) << 40)) break;
      n *= 2;
    }
    long_run = static_cast<std::uint64_t>(static_cast<double>(n) * (1.0 / seconds));
    if (long_run < n) long_run = n;
  }

  // Zeroes the counter and enqueues a run of `n` iterations.
  void start(Queue& q, std::uint64_t n) { start(q, counter, n); }
  // The same on a counter of the caller's (one element of this device).
  void start(Queue& q, const Buffer<std::uint64_t>& c, std::uint64_t n) {
    q.fill(c, std::uint64_t(0));
    q.launch(kernel, LaunchConfig::cover(Dim3(1), Dim3(1)), c, n);
  }
  // A fraction of the long run (at least one iteration).
  std::uint64_t part(double fraction) const {
    const auto n = static_cast<std::uint64_t>(static_cast<double>(long_run) * fraction);
    return n ? n : 1;
  }
  std::uint64_t count(Queue& q) { return q.read(counter)[0]; }
};

}  // namespace gpurt::test
