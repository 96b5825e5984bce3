// The harness of the launch-rate rows (gpurt bench, "launch_scaling"): the same code times gpurt
// and the raw API, so that both sides pay the same thread start, barrier and join.
#pragma once

#include <atomic>
#include <cstddef>
#include <exception>
#include <thread>
#include <vector>

#include "raw/common.hpp"

namespace gpurt::bench::raw {

// Calls per second of `threads` host threads, each running `body(t)` (t = 0 .. threads - 1), which
// makes `calls_per_thread` calls. Each thread first runs `setup(t)` (untimed: e.g. making a context
// current); the clock starts when every thread is set up and they are released together, and stops
// after every thread has returned and `drain()` (the main thread waiting for every queue once) has.
// The first exception of a thread, or of drain, is rethrown after all threads are joined.
template <class Setup, class Body, class Drain>
double threaded_rate(std::size_t threads, std::size_t calls_per_thread, Setup&& setup, Body&& body, Drain&& drain) {
  std::atomic<std::size_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> pool;
  pool.reserve(threads);
  auto join_all = [&] {
    go.store(true, std::memory_order_release);
    for (std::thread& th : pool) th.join();
  };
  try {
    for (std::size_t t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        try {
          setup(t);
        } catch (...) {
          errors[t] = std::current_exception();
        }
        ready.fetch_add(1, std::memory_order_acq_rel);
        while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
        if (errors[t]) return;
        try {
          body(t);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
  } catch (...) {  // a thread could not be started: release and join the others
    join_all();
    throw;
  }
  while (ready.load(std::memory_order_acquire) < threads) std::this_thread::yield();
  const auto t0 = clock_type::now();
  join_all();
  drain();
  const double seconds = since_us(t0) * 1e-6;
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  return static_cast<double>(threads * calls_per_thread) / seconds;
}

}  // namespace gpurt::bench::raw
