// `gpurt bench` measurements. Every figure is the median of several trials (Options::trials) after a
// warm-up, with its spread (min..max); gpurt and raw trials alternate so that drift affects both
// alike, and a row's ratio is the median of the per-trial ratios (paired()). Launch and transfer
// figures are host wall time (what an application sees); kernel figures are device time from
// timed events; matmul figures (matmul_rows.hpp) host wall time of back-to-back calls on both sides.
#include "runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "cpu_rows.hpp"
#include "gpurt/native.hpp"
#include "gpurt/types.hpp"
#include "dialect_rows.hpp"
#include "graph_rows.hpp"
#include "matmul_rows.hpp"
#include "raw/baseline.hpp"
#include "raw/threaded.hpp"
#include "stats.hpp"
#include "targets.hpp"
#include "tiny3.hpp"

namespace gpurt::bench {

namespace {

using clock_type = std::chrono::steady_clock;
double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

const char* launch_source = R"(
GPURT_KERNEL void empty_kernel() {}
GPURT_KERNEL void four_args(GPURT_GLOBAL float* a, GPURT_GLOBAL const float* b, uint32_t n, float s) {
  const size_t i = gpurt_global_id(0);
  if (i < n) a[i] = b[i] * s;
}
)";

const char* direction_name(CopyDirection d) {
  return d == CopyDirection::host_to_device ? "host_to_device"
         : d == CopyDirection::device_to_host ? "device_to_host" : "device_to_device";
}

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  ::gethostname(buf, sizeof buf - 1);
  return buf;
}

struct Context {
  const Device& dev;
  const Options& opt;
  std::unique_ptr<RawBaseline> raw;  // the vendor API on the same device (raw/baseline.hpp)
  Queue q;        // untimed, like the raw queue
  Queue timed;    // for device-time events
  int trials;
  // A CPU device (DeviceProperties::type): the rows sized for GPUs are measured smaller there
  // (docs/bench/approaches.md, "Row sizes on CPU devices"), so that a full run ends in minutes.
  bool cpu;
  void say(const std::string& s) const {
    if (opt.progress) opt.progress(s);
  }
};

nlohmann::json measure_launch(Context& c) {
  c.say("launch overhead");
  Program p = c.dev.build({SourceLanguage::portable, launch_source, "bench_launch.gpurt"});
  Kernel empty = p.kernel("empty_kernel"), four = p.kernel("four_args");
  // async_us is an independent harness: 100,000 empty 1x1 launches on one queue and one
  // wait (20,000 on CPU devices, where PoCL runs an empty kernel in ~30 us on 16 cores, not ~2 us;
  // 10,000 with --quick); the four-argument enqueue keeps its 20,000 (2,000).
  const std::size_t launches = c.opt.quick ? 10000 : c.cpu ? 20000 : 100000, syncs = c.opt.quick ? 200 : 2000;
  const std::size_t four_launches = c.opt.quick ? 2000 : 20000;
  const LaunchConfig one(Dim3(1), Dim3(1)), four_cfg(Dim3(4), Dim3(256));
  auto a = c.dev.alloc<float>(1024), b = c.dev.alloc<float>(1024);
  for (int i = 0; i < 100; ++i) c.q.launch(empty, one);
  c.q.finish();
  std::vector<double> g_async, r_async, g_sync, r_sync, g_four, r_four;
  for (int t = 0; t < c.trials; ++t) {
    auto t0 = clock_type::now();
    for (std::size_t i = 0; i < launches; ++i) c.q.launch(empty, one);
    c.q.finish();
    g_async.push_back(seconds_since(t0) * 1e6 / static_cast<double>(launches));
    r_async.push_back(c.raw->launch_async_us(launches));

    t0 = clock_type::now();
    for (std::size_t i = 0; i < syncs; ++i) {
      c.q.launch(empty, one);
      c.q.finish();
    }
    g_sync.push_back(seconds_since(t0) * 1e6 / static_cast<double>(syncs));
    r_sync.push_back(c.raw->launch_sync_us(syncs));

    t0 = clock_type::now();
    for (std::size_t i = 0; i < four_launches; ++i) c.q.launch(four, four_cfg, a, b, 1024u, 2.0f);
    g_four.push_back(seconds_since(t0) * 1e6 / static_cast<double>(four_launches));
    c.q.finish();
    r_four.push_back(c.raw->enqueue_four_args_us(four_launches));
  }
  // The same asynchronous launches with a trace running (the figure above is with tracing off,
  // where each call pays one atomic load for it): what turning GPURT_TRACE on costs.
  double traced_us = 0;
  if (!tracing()) {
    char tmpl[] = "/tmp/gpurt-bench-trace-XXXXXX";
    if (const char* dir = ::mkdtemp(tmpl)) {
      const std::string path = std::string(dir) + "/trace.json";
      const std::size_t n = std::min<std::size_t>(four_launches, 2000);
      start_trace(path);
      const auto t0 = clock_type::now();
      for (std::size_t i = 0; i < n; ++i) c.q.launch(empty, one);
      c.q.finish();
      traced_us = seconds_since(t0) * 1e6 / static_cast<double>(n);
      (void)stop_trace();
      std::remove(path.c_str());
      ::rmdir(dir);
    }
  }
  return {{"async_us", paired(g_async, r_async)},
          {"sync_us", paired(g_sync, r_sync)},
          {"enqueue_four_args_us", paired(g_four, r_four)},
          {"async_us_tracing_on", traced_us},
          {"launches_per_trial", launches},
          {"sync_launches_per_trial", syncs},
          {"four_args_launches_per_trial", four_launches},
          {"trials", c.trials}};
}

// What allocating costs (0.54 ms through gpurt against 0.02 ms raw on NVIDIA OpenCL, the
// residency step): allocate and free 1 MiB and 64 MiB, alone and with a blocking 4-byte write in
// between (the first use, where a lazy driver makes the memory resident), against the raw API's
// cuMemAlloc/cuMemFree and clCreateBuffer/clReleaseMemObject with the same write.
nlohmann::json measure_alloc(Context& c) {
  c.say("allocation");
  const std::size_t reps = c.opt.quick ? 20 : 200;
  nlohmann::json rows = nlohmann::json::array();
  const std::array<float, 1> one{1.0f};
  for (const std::size_t bytes : {std::size_t(1) << 20, std::size_t(64) << 20})
    for (const bool first_use : {false, true}) {
      std::vector<double> g, r;
      for (int t = 0; t < c.trials; ++t) {
        const auto t0 = clock_type::now();
        for (std::size_t i = 0; i < reps; ++i) {
          const Buffer<float> b = c.dev.alloc<float>(bytes / sizeof(float));
          if (first_use) c.q.write(one, b.view(0, 1));
        }
        g.push_back(seconds_since(t0) * 1e6 / static_cast<double>(reps));
        r.push_back(c.raw->alloc_us(bytes, reps, first_use));
      }
      nlohmann::json row = paired(g, r);
      row["bytes"] = bytes;
      row["first_use"] = first_use;
      rows.push_back(std::move(row));
    }
  return {{"rows", rows}, {"pairs_per_trial", reps}};
}

// Queue-ordered temporaries: `steps` steps of allocate 1 MiB + fill + free, back to back, then one
// wait, in microseconds per step: Queue::alloc (the memory back in the pool after the step), the
// raw API's own queue-ordered allocator where it has one (CUDA: cuMemAllocAsync, cuMemsetD32Async,
// cuMemFreeAsync), and Device::alloc (a driver allocation and free each step); then the allocation
// and free alone, without the fill, for Queue::alloc and Device::alloc. Each side runs one untimed
// round first.
// Copies from and to a registered std::vector (Device::register_host) against a HostBuffer of the
// same size, trial by trial alternated, both through gpurt (pinned copies both); and what
// registering and unregistering costs by size.
nlohmann::json measure_registered(Context& c) {
  c.say("registered host memory");
  nlohmann::json rows = nlohmann::json::array();
  const std::vector<std::size_t> sizes = c.opt.quick ? std::vector<std::size_t>{std::size_t(1) << 20, std::size_t(16) << 20}
                                                    : std::vector<std::size_t>{std::size_t(1) << 20, std::size_t(16) << 20,
                                                                               std::size_t(256) << 20};
  for (const std::size_t bytes : sizes) {
    std::vector<unsigned char> mine(bytes, 1);
    HostBuffer<unsigned char> pinned = c.dev.alloc_host<unsigned char>(bytes);
    std::memset(pinned.data(), 1, bytes);
    Buffer<unsigned char> d = c.dev.alloc<unsigned char>(bytes);
    std::vector<double> register_us;
    HostBuffer<unsigned char> reg;
    try {
      for (int t = 0; t < c.trials; ++t) {
        auto t0 = clock_type::now();
        reg = c.dev.register_host(mine.data(), bytes);
        reg = HostBuffer<unsigned char>();
        register_us.push_back(seconds_since(t0) * 1e6);
      }
      reg = c.dev.register_host(mine.data(), bytes);
    } catch (const Error& e) {
      if (e.category() != ErrorCategory::unsupported) throw;
      return {{"skipped", e.message()}};
    }
    const auto timed = [&](auto&& copy) {
      copy();
      c.q.finish();  // warm
      const int reps = bytes <= (std::size_t(1) << 20) ? 50 : bytes <= (std::size_t(16) << 20) ? 10 : 3;
      auto t0 = clock_type::now();
      for (int i = 0; i < reps; ++i) copy();
      c.q.finish();
      return static_cast<double>(bytes) * reps / seconds_since(t0) / 1e9;
    };
    std::vector<double> up_reg, up_pin, down_reg, down_pin, up_ratio, down_ratio;
    for (int t = 0; t < c.trials; ++t) {
      up_reg.push_back(timed([&] { c.q.copy(mine, d); }));  // the vector itself: inside the registration
      up_pin.push_back(timed([&] { c.q.copy(pinned, d); }));
      down_reg.push_back(timed([&] { c.q.copy(d, mine); }));
      down_pin.push_back(timed([&] { c.q.copy(d, pinned); }));
      up_ratio.push_back(up_reg.back() / up_pin.back());
      down_ratio.push_back(down_reg.back() / down_pin.back());
    }
    rows.push_back({{"bytes", bytes}, {"register_us", median(register_us)},
                    {"upload_registered_gbps", median(up_reg)}, {"upload_pinned_gbps", median(up_pin)},
                    {"upload_ratio", median(up_ratio)}, {"download_registered_gbps", median(down_reg)},
                    {"download_pinned_gbps", median(down_pin)}, {"download_ratio", median(down_ratio)}});
  }
  return {{"rows", rows}, {"target", "registered >= 0.97 x pinned at >= 1 MiB"}};
}

nlohmann::json measure_queue_alloc(Context& c) {
  c.say("queue-ordered allocation");
  const std::size_t steps = c.opt.quick ? 200 : 1000, bytes = std::size_t(1) << 20, n = bytes / sizeof(float);
  const auto queue_round = [&] {
    for (std::size_t i = 0; i < steps; ++i) {
      const Buffer<float> t = c.q.alloc<float>(n);
      c.q.fill(t, 1.0f);
    }
    c.q.finish();
  };
  const auto plain_round = [&] {
    for (std::size_t i = 0; i < steps; ++i) {
      const Buffer<float> t = c.dev.alloc<float>(n);
      c.q.fill(t, 1.0f);
    }
    c.q.finish();
  };
  // The allocation alone (no fill): what the pool saves per temporary, without the step's enqueue.
  const auto queue_only = [&] {
    for (std::size_t i = 0; i < steps; ++i) (void)c.q.alloc<float>(n);
    c.q.finish();
  };
  const auto plain_only = [&] {
    for (std::size_t i = 0; i < steps; ++i) (void)c.dev.alloc<float>(n);
    c.q.finish();
  };
  std::vector<double> queue_us, plain_us, raw_us, queue_only_us, plain_only_us;
  std::string raw_error;
  queue_round();
  plain_round();
  for (int t = 0; t < c.trials; ++t) {
    auto t0 = clock_type::now();
    queue_round();
    queue_us.push_back(seconds_since(t0) * 1e6 / static_cast<double>(steps));
    t0 = clock_type::now();
    plain_round();
    plain_us.push_back(seconds_since(t0) * 1e6 / static_cast<double>(steps));
    t0 = clock_type::now();
    queue_only();
    queue_only_us.push_back(seconds_since(t0) * 1e6 / static_cast<double>(steps));
    t0 = clock_type::now();
    plain_only();
    plain_only_us.push_back(seconds_since(t0) * 1e6 / static_cast<double>(steps));
    if (raw_error.empty()) {
      try {
        raw_us.push_back(c.raw->queue_alloc_us(bytes, steps));
      } catch (const Error& e) {
        raw_error = e.what();
      }
    }
  }
  c.dev.trim_pool();
  nlohmann::json out = {{"steps_per_trial", steps}, {"bytes", bytes},
                        {"queue_alloc_us", median(queue_us)}, {"plain_alloc_us", median(plain_us)},
                        {"plain_over_queue", median(plain_us) / median(queue_us)},
                        {"queue_alloc_only_us", median(queue_only_us)}, {"plain_alloc_only_us", median(plain_only_us)},
                        {"plain_over_queue_alloc_only", median(plain_only_us) / median(queue_only_us)}};
  if (!raw_us.empty()) {
    out["raw_us"] = median(raw_us);
    out["queue_over_raw"] = median(queue_us) / median(raw_us);
  } else {
    out["raw_us"] = nullptr;
    out["raw_note"] = raw_error;
  }
  return out;
}

// Aggregate launch rate (launches/s) of the empty 1x1 kernel from 1, 2, 4, 8 and 16 host threads,
// each with a queue of its own ("queue_per_thread") and all on one ("shared_queue"), against raw
// streams / command queues in the same layout (RawBaseline::launch_rate). Both sides are timed by
// raw::threaded_rate, in turn, trial by trial; each trial makes a fixed total of launches (80,000;
// 16,000 on CPU devices, 8,000 with --quick) split evenly over the threads, and waits for every
// queue once at the end.
nlohmann::json measure_launch_scaling(Context& c) {
  c.say("launch rate by host threads");
  const Program p = c.dev.build({SourceLanguage::portable, launch_source, "bench_launch.gpurt"});
  const Kernel empty = p.kernel("empty_kernel");
  const LaunchConfig one(Dim3(1), Dim3(1));
  const std::size_t total = c.opt.quick ? 8000 : c.cpu ? 16000 : 80000;
  const std::size_t counts[] = {1, 2, 4, 8, 16};
  std::vector<Queue> own;
  for (std::size_t i = 0; i < 16; ++i) own.push_back(c.dev.create_queue({QueueOptions::Timing::disabled}));
  nlohmann::json rows = nlohmann::json::array();
  for (const bool shared : {false, true})
    for (const std::size_t threads : counts) {
      const std::string layout = shared ? "shared_queue" : "queue_per_thread";
      c.say("launch rate, " + std::to_string(threads) + " threads, " + layout);
      const std::size_t per_thread = total / threads;
      std::vector<Queue*> queues(threads, &c.q);
      if (!shared)
        for (std::size_t t = 0; t < threads; ++t) queues[t] = &own[t];
      for (Queue* q : queues) {  // warm, as the raw side warms its queues
        for (int i = 0; i < 100; ++i) q->launch(empty, one);
        q->finish();
      }
      std::vector<double> g, r;
      for (int t = 0; t < c.trials; ++t) {
        g.push_back(raw::threaded_rate(
            threads, per_thread, [](std::size_t) {},
            [&](std::size_t i) {
              Queue& q = *queues[i];
              for (std::size_t n = 0; n < per_thread; ++n) q.launch(empty, one);
            },
            [&] {
              if (shared) c.q.finish();
              else for (Queue* q : queues) q->finish();
            }));
        r.push_back(c.raw->launch_rate(threads, shared, per_thread));
      }
      nlohmann::json row = paired(g, r);
      row["layout"] = layout;
      row["threads"] = threads;
      row["launches_per_thread"] = per_thread;
      row["unit"] = "launches/s";
      rows.push_back(row);
    }
  return {{"launches_per_trial", total}, {"rows", rows}};
}

double gpurt_copy_seconds(Context& c, CopyDirection dir, HostMemory mem, std::size_t bytes, std::size_t reps) {
  auto d0 = c.dev.alloc<char>(bytes);
  Buffer<char> d1;
  std::vector<char> pageable;
  HostBuffer<char> pinned;
  char* host = nullptr;
  if (dir == CopyDirection::device_to_device) {
    d1 = c.dev.alloc<char>(bytes);
  } else if (mem == HostMemory::pinned) {
    pinned = c.dev.alloc_host<char>(bytes);
    std::fill(pinned.begin(), pinned.end(), 1);
    host = pinned.data();
  } else {
    pageable.assign(bytes, 1);
    host = pageable.data();
  }
  auto one = [&] {
    if (dir == CopyDirection::host_to_device) c.q.copy(static_cast<const char*>(host), d0);
    else if (dir == CopyDirection::device_to_host) c.q.copy(d0, host);
    else c.q.copy(d0, d1);
  };
  one();
  c.q.finish();
  const auto t0 = clock_type::now();
  for (std::size_t i = 0; i < reps; ++i) one();
  c.q.finish();
  return seconds_since(t0);
}

nlohmann::json measure_transfers(Context& c) {
  std::vector<std::size_t> sizes;
  // 4 KiB to 1 GiB in steps of 4 (to 256 MiB on CPU devices, where a copy is a memcpy in host
  // memory and the largest sizes add only page faults; to 16 MiB in steps of 16 with --quick).
  const std::size_t largest = c.opt.quick ? (16u << 20) : c.cpu ? (256u << 20) : (1u << 30);
  for (std::size_t s = 4096; s <= largest; s *= c.opt.quick ? 16 : 4) sizes.push_back(s);
  nlohmann::json rows = nlohmann::json::array();
  const std::pair<CopyDirection, HostMemory> kinds[] = {
      {CopyDirection::host_to_device, HostMemory::pinned},   {CopyDirection::host_to_device, HostMemory::pageable},
      {CopyDirection::device_to_host, HostMemory::pinned},   {CopyDirection::device_to_host, HostMemory::pageable},
      {CopyDirection::device_to_device, HostMemory::pinned}};
  for (const auto& [dir, mem] : kinds) {
    for (std::size_t bytes : sizes) {
      const std::string what = std::string(direction_name(dir)) +
                               (dir == CopyDirection::device_to_device ? "" : mem == HostMemory::pinned ? " pinned" : " pageable");
      c.say("transfers " + what + " " + std::to_string(bytes >> 10) + " KiB");
      const std::size_t budget = c.opt.quick ? (32u << 20) : (512u << 20);
      const std::size_t reps = std::max<std::size_t>(3, std::min<std::size_t>(2000, budget / bytes));
      std::vector<double> g, r;
      for (int t = 0; t < c.trials; ++t) {
        g.push_back(static_cast<double>(bytes) * reps / gpurt_copy_seconds(c, dir, mem, bytes, reps) * 1e-9);
        r.push_back(static_cast<double>(bytes) * reps / c.raw->copy_seconds(dir, mem, bytes, reps) * 1e-9);
      }
      nlohmann::json row = paired(g, r);
      row["direction"] = direction_name(dir);
      row["memory"] = dir == CopyDirection::device_to_device ? "device" : mem == HostMemory::pinned ? "pinned" : "pageable";
      row["bytes"] = bytes;
      row["unit"] = "GB/s";
      rows.push_back(row);
    }
  }
  return rows;
}

// Staged pageable copies of 256 MiB (64 MiB on CPU devices, 4 MiB with --quick) by the number of
// host copy threads: the data behind the default (gpurt::staging_threads(direction)).
nlohmann::json measure_staging_threads(Context& c) {
  const std::size_t bytes = c.opt.quick ? (4u << 20) : c.cpu ? (64u << 20) : (256u << 20);
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const Staging saved_mode = staging();
  set_staging(Staging::always);
  nlohmann::json rows = nlohmann::json::array();
  for (unsigned t : {1u, 2u, 4u, 8u, 12u, 16u, 24u, 32u}) {
    if (t > hw) break;
    c.say("staging threads " + std::to_string(t));
    set_staging_threads(t);
    nlohmann::json row{{"threads", t}, {"bytes", bytes}};
    for (CopyDirection dir : {CopyDirection::host_to_device, CopyDirection::device_to_host}) {
      std::vector<double> g;
      for (int i = 0; i < c.trials; ++i)
        g.push_back(static_cast<double>(bytes) * 3 / gpurt_copy_seconds(c, dir, HostMemory::pageable, bytes, 3) * 1e-9);
      row[direction_name(dir)] = median(g);
    }
    rows.push_back(row);
  }
  set_staging_threads(0);
  set_staging(saved_mode);
  return {{"default_threads",
           {{"host_to_device", staging_threads(CopyDirection::host_to_device)},
            {"device_to_host", staging_threads(CopyDirection::device_to_host)}}},
          {"rows", rows}};
}

nlohmann::json measure_build(Context& c) {
  c.say("program build");
  const double raw_ms = c.raw->build_tiny_ms();
  const CacheConfig saved = cache_config();
  char tmpl[] = "/tmp/gpurt-bench-cache-XXXXXX";
  const char* dir = ::mkdtemp(tmpl);
  set_cache_config({true, dir ? dir : ""});
  const Program cold = c.dev.build({SourceLanguage::portable, tiny3_source, "tiny3.gpurt"});
  const Program cached = c.dev.build({SourceLanguage::portable, tiny3_source, "tiny3.gpurt"});
  set_cache_config(saved);
  return {{"raw_cold_ms", raw_ms},
          {"gpurt_cold_ms", cold.build_info().milliseconds},
          {"gpurt_cold_path", to_string(cold.build_info().path)},
          {"gpurt_cached_ms", cached.build_info().milliseconds},
          {"gpurt_cached_path", to_string(cached.build_info().path)}};
}

// Median device milliseconds per call of `work`: `batch` calls back to back between two timed
// events, divided by `batch` - the way the copy-bandwidth baseline runs its copies back to back,
// so that neither side pays an event pair per call (NVIDIA's OpenCL events cost ~10 us of device
// time around a 130 us copy).
template <class F>
double device_ms(Context& c, int reps, F&& work, int batch = 1) {
  work();
  c.timed.finish();
  std::vector<double> v;
  for (int i = 0; i < reps; ++i) {
    const Event a = c.timed.record();
    for (int b = 0; b < batch; ++b) work();
    const Event b = c.timed.record();
    v.push_back(elapsed_ms(a, b) / batch);
  }
  return median(v);
}

nlohmann::json measure_kernels(Context& c, double& copy_gbps) {
  const std::size_t side = c.opt.quick ? 1024 : 8192;  // n = side^2 floats: 4 MiB or 256 MiB
  const std::size_t n = side * side;
  const int reps = c.opt.quick ? 3 : 7;
  const int batch = c.opt.quick ? 2 : 5;
  c.say("device copy bandwidth");
  {
    const std::size_t bytes = n * sizeof(float);
    const std::size_t r = c.opt.quick ? 5 : 20;
    std::vector<double> v;
    for (int t = 0; t < c.trials; ++t)
      v.push_back(2.0 * bytes * r / c.raw->copy_seconds(CopyDirection::device_to_device, HostMemory::pinned, bytes, r) * 1e-9);
    copy_gbps = median(v);
  }
  auto x = c.dev.alloc<float>(n), y = c.dev.alloc<float>(n), z = c.dev.alloc<float>(n);
  auto keys = c.dev.alloc<std::uint32_t>(n), counts = c.dev.alloc<std::uint32_t>(256);
  auto filter = c.dev.alloc<float>(25);
  {  // random data: uniform [0, 1) values, keys spread over the 256 bins
    std::vector<float> hx(n), hy(n), hf(25);
    std::vector<std::uint32_t> hk(n);
    std::uint64_t r = 0x2545f4914f6cdd1dull;
    auto next = [&] {
      r ^= r << 13, r ^= r >> 7, r ^= r << 17;
      return r;
    };
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint64_t v = next();
      hx[i] = static_cast<float>(v >> 40) * 0x1p-24f;
      hy[i] = static_cast<float>((v >> 16) & 0xffffff) * 0x1p-24f;
      hk[i] = static_cast<std::uint32_t>(v & 0xff);
    }
    for (float& w : hf) w = static_cast<float>(next() >> 40) * 0x1p-24f - 0.5f;
    c.timed.write(hx, x);
    c.timed.write(hy, y);
    c.timed.write(hk, keys);
    c.timed.write(hf, filter);
  }
  nlohmann::json rows = nlohmann::json::array();
  const double fb = static_cast<double>(n) * sizeof(float);
  auto add = [&](const std::string& name, double bytes, double ms) {
    const double gbps = bytes / (ms * 1e-3) * 1e-9;
    rows.push_back({{"name", name}, {"bytes", bytes}, {"milliseconds", ms}, {"gbps", gbps},
                    {"fraction_of_copy", copy_gbps > 0 ? gbps / copy_gbps : 0.0}});
  };
  c.say("kernels: copy, fill, axpy, binary");
  add("copy", 2 * fb, device_ms(c, reps, [&] { lib::copy(c.timed, x, z); }, batch));
  add("fill", fb, device_ms(c, reps, [&] { lib::fill(c.timed, z, 1.0f); }, batch));
  add("axpy", 3 * fb, device_ms(c, reps, [&] { lib::axpy(c.timed, 2.0f, x, y); }, batch));
  add("binary_add", 3 * fb, device_ms(c, reps, [&] { lib::binary(c.timed, lib::BinaryOp::add, x, y, z); }, batch));
  c.say("kernels: reduce, scan, transpose, conv2d, histogram");
  auto sum = c.dev.alloc<float>(1);
  add("reduce_sum", fb, device_ms(c, reps, [&] { lib::reduce(c.timed, lib::ReduceOp::sum, x, sum); }, batch));
  add("scan_inclusive", 2 * fb, device_ms(c, reps, [&] { lib::scan(c.timed, x, z, lib::ScanKind::inclusive); }, batch));
  add("transpose", 2 * fb, device_ms(c, reps, [&] { lib::transpose(c.timed, x, z, side, side); }, batch));
  add("conv2d_5x5", 2 * fb, device_ms(c, reps, [&] { lib::conv2d(c.timed, x, filter, z, side, side, 5); }, batch));
  add("histogram_256", fb, device_ms(c, reps, [&] { lib::histogram(c.timed, keys, counts); }, batch));
  c.say("kernels: softmax and layer norm over rows of 1,024");
  auto gamma = c.dev.alloc<float>(1024), beta = c.dev.alloc<float>(1024);
  c.timed.copy(std::vector<float>(1024, 1.0f), gamma);
  c.timed.fill(beta, 0.0f);
  add("softmax_rows_1024", 2 * fb, device_ms(c, reps, [&] { lib::softmax_rows(c.timed, x, z, n / 1024, 1024); }, batch));
  add("layer_norm_rows_1024", 2 * fb,
      device_ms(c, reps, [&] { lib::layer_norm_rows(c.timed, x, gamma, beta, z, n / 1024, 1024); }, batch));
  // The same rows stored in half and bfloat16 (computed in float): half the bytes moved.
  const auto rows16 = [&](auto zero, const char* suffix) {
    using T = decltype(zero);
    auto x16 = c.dev.alloc<T>(n), z16 = c.dev.alloc<T>(n), g16 = c.dev.alloc<T>(1024), b16 = c.dev.alloc<T>(1024);
    c.timed.fill(x16, T(0.5f));
    c.timed.fill(g16, T(1.0f));
    c.timed.fill(b16, T(0.0f));
    add(std::string("softmax_rows_1024_") + suffix, fb,
        device_ms(c, reps, [&] { lib::softmax_rows(c.timed, x16, z16, n / 1024, 1024); }, batch));
    add(std::string("layer_norm_rows_1024_") + suffix, fb,
        device_ms(c, reps, [&] { lib::layer_norm_rows(c.timed, x16, g16, b16, z16, n / 1024, 1024); }, batch));
    c.timed.finish();
  };
  rows16(half(), "half");
  rows16(bfloat16(), "bf16");
  c.timed.finish();
  return rows;
}

// Each kernel row's target (targets.hpp) as "target" (null: none of this kind) and "met"
// (null without a target). A row that carries a naive kernel's or an OpenMP loop's time of the same
// operation (naive_ms, openmp_ms; bench/cpu_rows) also gets naive_ratio = milliseconds / naive_ms
// (target <= 1: no library call slower than the naive kernel) and openmp_ratio = milliseconds /
// openmp_ms (target <= 2), each with its _target and _met, unless it has them already.
void add_kernel_targets(nlohmann::json& rows, DeviceType type) {
  for (auto& row : rows) {
    const nlohmann::json target = kernel_target(row["name"].get<std::string>(), type == DeviceType::cpu);
    row["target"] = target;
    row["met"] = target.is_null() ? nlohmann::json() : nlohmann::json(row["fraction_of_copy"].get<double>() >= target.get<double>());
    for (const auto& [base, limit] : {std::pair<std::string, double>{"naive", 1.0}, {"openmp", 2.0}}) {
      const std::string ms = base + "_ms", ratio = base + "_ratio";
      if (!row.contains(ms) || !row[ms].is_number() || row[ms].get<double>() <= 0 || row.contains(ratio)) continue;
      row[ratio] = row["milliseconds"].get<double>() / row[ms].get<double>();
      row[base + "_target"] = limit;
      row[base + "_met"] = row[ratio].get<double>() <= limit;
    }
  }
}

// Interop rows: (a) cuBLAS SGEMM 4096^3 on gpurt buffers in gpurt's stream against cuBLAS on its
// own cuMemAlloc buffers and stream; (b) GPU-to-GPU copies through Queue::copy against the native
// peer copy, 64 MiB and 1 GiB (256 MiB from a CPU device), to the first other device of the backend. Not with --quick (a
// 4096^3 SGEMM and 1 GiB copies). Whatever cannot run says why in "skipped".
// A copy between this device and one of another backend (relayed through host memory by the core),
// 64 MiB each way, against the slower of the two host links it crosses, measured in the same run:
// this device's pinned download and the other device's pinned upload (and the reverse). The other
// device: the first of Options::partners of another backend or without peer access, else the first
// of another backend in gpurt::devices(), GPUs first. Cheap: in --quick too.
nlohmann::json measure_relayed_copy(Context& c) {
  Device other;
  for (const Device& d : c.opt.partners)
    if (!other.valid() && d != c.dev && (d.backend() != c.dev.backend() || !peer_access(c.dev, d))) other = d;
  for (int pass = 0; pass < 2 && !other.valid(); ++pass)
    for (const Device& d : devices())
      if (d.backend() != c.dev.backend() && (pass == 1 || d.properties().type == DeviceType::gpu)) {
        other = d;
        break;
      }
  if (!other.valid()) return {{"skipped", "needs a device of another backend (or context) than this one"}};
  const std::size_t bytes = std::size_t(64) << 20;
  const int copies = c.opt.quick ? 2 : 5;
  c.say("interop: copy between devices, 64 MiB, with " + other.selector());
  try {
    Queue oq = other.create_queue();
    auto mine = c.dev.alloc<char>(bytes), theirs = other.alloc<char>(bytes);
    HostBuffer<char> pin_mine = c.dev.alloc_host<char>(bytes), pin_theirs = other.alloc_host<char>(bytes);
    std::fill(pin_mine.begin(), pin_mine.end(), 1);
    std::fill(pin_theirs.begin(), pin_theirs.end(), 2);
    c.q.copy(pin_mine, mine);
    oq.copy(pin_theirs, theirs);
    c.q.finish();
    oq.finish();
    auto rate = [&](auto&& body) {  // GB/s of `copies` calls of body, after one untimed
      body();
      const auto t0 = clock_type::now();
      for (int i = 0; i < copies; ++i) body();
      return static_cast<double>(bytes) * copies / seconds_since(t0) * 1e-9;
    };
    nlohmann::json rows = nlohmann::json::array();
    for (int dir = 0; dir < 2; ++dir) {
      std::vector<double> g, links;
      for (int t = 0; t < c.trials; ++t) {
        if (dir == 0) {
          g.push_back(rate([&] { c.q.copy(mine, theirs); c.q.finish(); }));
          const double down = rate([&] { c.q.copy(mine, pin_mine); c.q.finish(); });
          const double up = rate([&] { oq.copy(pin_theirs, theirs); oq.finish(); });
          links.push_back(std::min(down, up));
        } else {
          g.push_back(rate([&] { c.q.copy(theirs, mine); c.q.finish(); }));
          const double down = rate([&] { oq.copy(theirs, pin_theirs); oq.finish(); });
          const double up = rate([&] { c.q.copy(pin_mine, mine); c.q.finish(); });
          links.push_back(std::min(down, up));
        }
      }
      nlohmann::json row = paired(g, links, "slower_link");
      row["from"] = dir == 0 ? c.dev.selector() : other.selector();
      row["to"] = dir == 0 ? other.selector() : c.dev.selector();
      row["bytes"] = bytes;
      row["unit"] = "GB/s";
      rows.push_back(row);
    }
    return rows;
  } catch (const Error& e) {
    return {{"skipped", e.message()}};
  }
}

nlohmann::json measure_interop(Context& c) {
  nlohmann::json j;
  j["relayed_copy"] = measure_relayed_copy(c);
  if (c.opt.quick) {
    const std::string why = "not measured with --quick (4096^3 SGEMM, 1 GiB copies)";
    j["cublas_sgemm"] = {{"skipped", why}};
    j["peer_copy"] = {{"skipped", why}};
    return j;
  }
  const std::size_t n = 4096, reps = 10;
  c.say("interop: cuBLAS SGEMM " + std::to_string(n) + "^3 on gpurt buffers and stream");
  try {
    std::vector<double> g, r;
    for (int t = 0; t < c.trials; ++t) {
      g.push_back(c.raw->gemm_on_gpurt_gflops(c.q, n, reps));
      r.push_back(c.raw->gemm_gflops(RawBaseline::GemmPrecision::fp32, n, n, n, reps));
    }
    j["cublas_sgemm"] = paired(g, r);
    j["cublas_sgemm"]["n"] = n;
    j["cublas_sgemm"]["unit"] = "GFLOP/s";
  } catch (const Error& e) {
    j["cublas_sgemm"] = {{"skipped", e.message()}};
  }

  Device peer;
  for (const Device& d : devices())
    if (d.backend() == c.dev.backend() && d.selector() != c.dev.selector()) {
      peer = d;
      break;
    }
  if (!peer.valid()) {
    j["peer_copy"] = {{"skipped", "needs two " + c.dev.backend() + " devices"}};
    return j;
  }
  nlohmann::json rows = nlohmann::json::array();
  try {
    // 64 MiB and 1 GiB (256 MiB from a CPU device, as its transfer rows).
    for (std::size_t bytes : {std::size_t(64) << 20, c.cpu ? std::size_t(256) << 20 : std::size_t(1) << 30}) {
      c.say("interop: peer copy " + std::to_string(bytes >> 20) + " MiB to " + peer.selector());
      const std::size_t copies = bytes > (std::size_t(64) << 20) ? 3 : 20;
      auto src = c.dev.alloc<char>(bytes), dst = peer.alloc<char>(bytes);
      c.q.fill(src, char(1));
      std::vector<double> g, r;
      for (int t = 0; t < c.trials; ++t) {
        c.q.copy(src, dst);
        c.q.finish();
        const auto t0 = clock_type::now();
        for (std::size_t i = 0; i < copies; ++i) c.q.copy(src, dst);
        c.q.finish();
        g.push_back(static_cast<double>(bytes) * copies / seconds_since(t0) * 1e-9);
        r.push_back(static_cast<double>(bytes) * copies / c.raw->peer_copy_seconds(peer, bytes, copies) * 1e-9);
      }
      nlohmann::json row = paired(g, r);
      row["bytes"] = bytes;
      row["peer"] = peer.selector();
      row["peer_access"] = peer_access(c.dev, peer);
      row["unit"] = "GB/s";
      rows.push_back(row);
    }
    j["peer_copy"] = rows;
  } catch (const Error& e) {
    j["peer_copy"] = {{"skipped", e.message()}};
  }
  return j;
}

}  // namespace

const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names = {"launch", "launch_scaling", "alloc", "queue_alloc", "registered",
                                                 "transfers",
                                                 "staging_threads",
                                                 "build", "kernels", "kernel_baselines", "matmul", "interop", "graph",
                                                 "dialect"};
  return names;
}

nlohmann::json run(const Device& device, const Options& options) {
  Context c{device, options, open_raw_baseline(device), device.create_queue({QueueOptions::Timing::disabled}),
            device.create_queue(), options.trials > 0 ? options.trials : options.quick ? 3 : 7,
            device.properties().type == DeviceType::cpu};
  const DeviceProperties& p = device.properties();
  nlohmann::json j;
  j["gpurt_version"] = version_string();
  j["date"] = utc_now();
  j["host"] = host_name();
  j["quick"] = options.quick;
  j["device"] = {{"selector", device.selector()}, {"name", p.name}, {"backend", p.backend}, {"type", to_string(p.type)},
                 {"driver", p.driver_version}, {"platform", p.platform_version},
                 {"backend_version", gpurt::backend(p.backend).version}, {"raw_api", c.raw->api()}};
  j["method"] = {{"trials", c.trials},
                 {"order", "gpurt and raw trials alternate (gpurt, raw, gpurt, raw, ...) in each row"},
                 {"value", "median of the trials"},
                 {"spread", "min..max of the trials"},
                 {"ratio", "median (and min..max) of the per-trial ratios gpurt / raw, trial i against trial i"}};
  const auto wanted = [&](const char* name) {
    return options.sections.empty() ||
           std::find(options.sections.begin(), options.sections.end(), name) != options.sections.end();
  };
  if (wanted("launch")) j["launch"] = measure_launch(c);
  if (wanted("launch_scaling")) j["launch_scaling"] = measure_launch_scaling(c);
  if (wanted("alloc")) j["alloc"] = measure_alloc(c);
  if (wanted("queue_alloc")) j["queue_alloc"] = measure_queue_alloc(c);
  if (wanted("registered")) j["registered"] = measure_registered(c);
  if (wanted("transfers")) j["transfers"] = measure_transfers(c);
  if (wanted("staging_threads")) j["staging_threads"] = measure_staging_threads(c);
  if (wanted("build")) j["build"] = measure_build(c);
  if (wanted("kernels")) {
    double copy_gbps = 0;
    j["kernels"] = measure_kernels(c, copy_gbps);
    add_kernel_targets(j["kernels"], p.type);
    j["copy_bandwidth_gbps"] = copy_gbps;
  }
  // The OpenMP matmul row runs on CPU devices only: 2048^3 there, as the matmul rows' square shape.
  if (wanted("kernel_baselines"))
    j["kernel_baselines"] = measure_kernel_baselines(device, c.timed, c.opt.quick ? 1024 : 8192, c.opt.quick ? 256 : 2048,
                                                    c.trials, c.opt.quick ? 2 : 5,
                                                    [&](const std::string& s) { c.say(s); });  // bench/cpu_rows.hpp
  if (wanted("matmul"))
    j["matmul"] = measure_matmul_rows({device, c.q, *c.raw, options.quick, c.trials, [&](const std::string& s) { c.say(s); }});
  if (wanted("interop")) j["interop"] = measure_interop(c);
  if (wanted("graph")) j["graph"] = measure_graph_rows(device, options, c.trials);
  if (wanted("dialect"))
    j["dialect"] = measure_dialect_rows(device, c.timed, options.quick, c.trials, [&](const std::string& s) { c.say(s); });
  return j;
}

}  // namespace gpurt::bench
