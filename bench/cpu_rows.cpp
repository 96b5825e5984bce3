// The "kernel_baselines" rows of `gpurt bench` (cpu_rows.hpp says what each compares). The OpenMP
// loops are the plainest a user would write - one `omp parallel for` over the outer loop - compiled
// with -fopenmp in this file only (bench/CMakeLists.txt).
#include "cpu_rows.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#ifdef GPURT_BENCH_OPENMP
#include <omp.h>
#endif

#include "gpurt/library.hpp"

namespace gpurt::bench {

namespace {

// The naive kernels: one work-item per element, no loop, no tuning.
const char* naive_source = R"(
GPURT_KERNEL void naive_copy(GPURT_GLOBAL const float* x, GPURT_GLOBAL float* z, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) z[i] = x[i];
}
GPURT_KERNEL void naive_fill(GPURT_GLOBAL float* z, float v, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) z[i] = v;
}
GPURT_KERNEL void naive_axpy(float a, GPURT_GLOBAL const float* x, GPURT_GLOBAL float* y, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
GPURT_KERNEL void naive_add(GPURT_GLOBAL const float* a, GPURT_GLOBAL const float* b, GPURT_GLOBAL float* z,
                           uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i < n) z[i] = a[i] + b[i];
}
GPURT_KERNEL void naive_histogram(GPURT_GLOBAL const uint32_t* in, GPURT_GLOBAL uint32_t* counts, uint64_t n,
                                  uint32_t bins) {
  const size_t i = gpurt_global_id(0);
  if (i < n && in[i] < bins) gpurt_atomic_add(&counts[in[i]], 1u);
}
// One pass of a tree reduction: each group sums its elements (one per work-item) in local memory
// and writes one partial; the host repeats the pass over the partials until one is left.
GPURT_KERNEL void naive_sum(GPURT_GLOBAL const float* in, GPURT_GLOBAL float* out, uint64_t n,
                            GPURT_DYNAMIC_LOCAL(float, tree)) {
  const size_t i = gpurt_global_id(0), lid = gpurt_local_id(0), size = gpurt_local_size(0);
  tree[lid] = i < n ? in[i] : 0.0f;
  gpurt_local_barrier();
  for (size_t s = 1; s < size; s *= 2) {
    if (lid % (2 * s) == 0 && lid + s < size) tree[lid] += tree[lid + s];
    gpurt_local_barrier();
  }
  if (lid == 0) out[gpurt_group_id(0)] = tree[0];
}
)";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// Median device milliseconds per call: `batch` calls between two events on `q`, over `trials`.
template <class F>
double device_ms(Queue& q, int trials, int batch, F&& work) {
  work();
  q.finish();
  std::vector<double> v;
  for (int t = 0; t < trials; ++t) {
    const Event a = q.record();
    for (int b = 0; b < batch; ++b) work();
    const Event b = q.record();
    v.push_back(elapsed_ms(a, b) / batch);
  }
  return median(v);
}

// The library against its baseline on the device, trial by trial in turn (library, baseline,
// library, ...), each trial `batch` calls between two events: the medians of each side and the
// median and [min..max] of the per-trial ratios, so that load that comes and goes during the row
// (a CPU device shares its cores with everything else on the host) weighs on both sides alike.
struct Paired {
  double library_ms = 0, base_ms = 0, ratio = 0, ratio_min = 0, ratio_max = 0;
};
template <class L, class B>
Paired paired_ms(Queue& q, int trials, int batch, L&& library, B&& base) {
  auto one = [&](auto&& work) {
    const Event a = q.record();
    for (int b = 0; b < batch; ++b) work();
    const Event e = q.record();
    return elapsed_ms(a, e) / batch;
  };
  library();
  base();
  q.finish();
  std::vector<double> lib_v, base_v, ratios;
  for (int t = 0; t < trials; ++t) {
    lib_v.push_back(one(library));
    base_v.push_back(one(base));
    if (base_v.back() > 0) ratios.push_back(lib_v.back() / base_v.back());
  }
  Paired p;
  p.library_ms = median(lib_v);
  p.base_ms = median(base_v);
  p.ratio = median(ratios);
  if (!ratios.empty()) {
    p.ratio_min = *std::min_element(ratios.begin(), ratios.end());
    p.ratio_max = *std::max_element(ratios.begin(), ratios.end());
  }
  return p;
}

// Median host milliseconds per call of `work` (the OpenMP loops run on the host).
template <class F>
double host_ms(int trials, F&& work) {
  work();
  std::vector<double> v;
  for (int t = 0; t < trials; ++t) {
    const auto t0 = std::chrono::steady_clock::now();
    work();
    v.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(v);
}

nlohmann::json row(const char* name, const char* base, double library_ms, double base_ms) {
  return {{"name", name},
          {"library_ms", library_ms},
          {std::string(base) + "_ms", base_ms},
          {std::string("library_over_") + base, base_ms > 0 ? library_ms / base_ms : 0.0}};
}

nlohmann::json naive_rows(const Device& dev, Queue& q, std::size_t n, int trials, int batch,
                          const std::function<void(const std::string&)>& say) {
  const Program p = dev.build({SourceLanguage::portable, naive_source, "naive_kernels.gpurt"});
  const Kernel copy = p.kernel("naive_copy"), fill = p.kernel("naive_fill"), axpy = p.kernel("naive_axpy"),
               add = p.kernel("naive_add"), sum = p.kernel("naive_sum"), histogram = p.kernel("naive_histogram");
  auto x = dev.alloc<float>(n), y = dev.alloc<float>(n), z = dev.alloc<float>(n), s = dev.alloc<float>(1);
  lib::fill(q, x, 0.5f);
  lib::fill(q, y, 0.25f);
  const std::uint64_t n64 = n;
  const std::size_t group = LaunchConfig::cover(sum, n).group_size.x;
  auto parts = dev.alloc<float>((n + group - 1) / group), parts2 = dev.alloc<float>((n + group - 1) / group);
  auto naive_reduce = [&] {
    std::size_t left = n;
    const Buffer<float>* from = &x;
    Buffer<float>* to = &parts;
    while (left > 1) {
      const LaunchConfig cfg = LaunchConfig::cover(Dim3(left), Dim3(group), group * sizeof(float));
      q.launch(sum, cfg, *from, *to, static_cast<std::uint64_t>(left));
      left = cfg.groups.x;
      from = to;
      to = to == &parts ? &parts2 : &parts;
    }
    q.copy(from->view(0, 1), s);
  };
  nlohmann::json rows = nlohmann::json::array();
  auto add_row = [&](const char* name, auto&& library, auto&& naive) {
    say(std::string("kernel baselines: ") + name + " against a naive kernel");
    const Paired t = paired_ms(q, trials, batch, library, naive);  // trial by trial in turn
    nlohmann::json r = row(name, "naive", t.library_ms, t.base_ms);
    r["library_over_naive"] = t.ratio;  // the median of the per-trial ratios (was the medians' ratio)
    r["library_over_naive_spread"] = {t.ratio_min, t.ratio_max};
    r["elements"] = n;
    r["naive_group"] = group;
    rows.push_back(r);
  };
  add_row("copy", [&] { lib::copy(q, x, z); }, [&] { q.launch(copy, LaunchConfig::cover(copy, n), x, z, n64); });
  add_row("fill", [&] { lib::fill(q, z, 1.0f); }, [&] { q.launch(fill, LaunchConfig::cover(fill, n), z, 1.0f, n64); });
  add_row("axpy", [&] { lib::axpy(q, 2.0f, x, y); },
          [&] { q.launch(axpy, LaunchConfig::cover(axpy, n), 2.0f, x, y, n64); });
  add_row("binary_add", [&] { lib::binary(q, lib::BinaryOp::add, x, y, z); },
          [&] { q.launch(add, LaunchConfig::cover(add, n), x, y, z, n64); });
  add_row("reduce_sum", [&] { lib::reduce(q, lib::ReduceOp::sum, x, s); }, naive_reduce);
  auto keys = dev.alloc<std::uint32_t>(n), counts = dev.alloc<std::uint32_t>(256);
  {
    std::vector<std::uint32_t> hk(n);
    for (std::size_t i = 0; i < n; ++i) hk[i] = static_cast<std::uint32_t>((i * 2654435761u) >> 24) & 0xffu;
    q.write(hk, keys);
  }
  add_row("histogram_256", [&] { lib::histogram(q, keys, counts); }, [&] {
    q.fill(counts, 0u);  // as lib::histogram does
    q.launch(histogram, LaunchConfig::cover(histogram, n), keys, counts, n64, 256u);
  });
  q.finish();
  return rows;
}

#ifdef GPURT_BENCH_OPENMP
nlohmann::json openmp_rows(const Device& dev, Queue& q, std::size_t side, std::size_t mn, int trials, int batch,
                           const std::function<void(const std::string&)>& say) {
  const std::size_t n = side * side;
  const long long sn = static_cast<long long>(side);
  std::vector<float> hx(n), hz(n), hf(25, 0.04f);
  for (std::size_t i = 0; i < n; ++i) hx[i] = static_cast<float>(i % 1000) * 0.001f;
  auto x = dev.alloc<float>(n), z = dev.alloc<float>(n), f = dev.alloc<float>(25);
  q.write(hx, x);
  q.write(hf, f);
  nlohmann::json rows = nlohmann::json::array();
  // The library first (device time), then the loop (host time), so that the loop's threads are
  // not still spinning while the device works.
  auto add_row = [&](const char* name, std::size_t size, int runs, auto&& library, auto&& loop) {
    const double lib_ms = device_ms(q, runs, runs == trials ? batch : 1, library);
    const double omp_ms = host_ms(runs, loop);
    nlohmann::json r = row(name, "openmp", lib_ms, omp_ms);
    r["size"] = size;
    rows.push_back(r);
  };
  say("kernel baselines: scan, transpose, conv2d against OpenMP loops");
  // Scan: each thread sums its chunk, the chunks' offsets are added up, each thread scans its chunk.
  std::vector<float> offsets(static_cast<std::size_t>(omp_get_max_threads()) + 1);
  add_row("scan_inclusive", n, trials, [&] { lib::scan(q, x, z, lib::ScanKind::inclusive); }, [&] {
#pragma omp parallel
            {
              const long long t = omp_get_thread_num(), threads = omp_get_num_threads();
              const long long total = static_cast<long long>(n);
              const long long b = total * t / threads, e = total * (t + 1) / threads;
              float s = 0;
              for (long long i = b; i < e; ++i) s += hx[i];
              offsets[t + 1] = s;
#pragma omp barrier
#pragma omp single
              for (long long i = 1; i <= threads; ++i) offsets[i] += offsets[i - 1];
              float run = offsets[t];
              for (long long i = b; i < e; ++i) hz[i] = run += hx[i];
            }
          });
  add_row("transpose", side, trials, [&] { lib::transpose(q, x, z, side, side); }, [&] {
#pragma omp parallel for
            for (long long r = 0; r < sn; ++r)
              for (long long c = 0; c < sn; ++c) hz[c * sn + r] = hx[r * sn + c];
          });
  add_row("conv2d_5x5", side, trials, [&] { lib::conv2d(q, x, f, z, side, side, 5); }, [&] {
#pragma omp parallel for
            for (long long y = 0; y < sn; ++y)
              for (long long xx = 0; xx < sn; ++xx) {
                float acc = 0;
                for (long long fy = 0; fy < 5; ++fy)
                  for (long long fx = 0; fx < 5; ++fx) {
                    const long long iy = y + fy - 2, ix = xx + fx - 2;
                    if (iy >= 0 && iy < sn && ix >= 0 && ix < sn) acc += hf[fy * 5 + fx] * hx[iy * sn + ix];
                  }
                hz[y * sn + xx] = acc;
              }
          });
  say("kernel baselines: matmul " + std::to_string(mn) + "^3 against an OpenMP loop");
  const long long m = static_cast<long long>(mn);
  std::vector<float> ha(mn * mn, 0.0078125f), hb(mn * mn, 0.0078125f), hc(mn * mn);
  auto a = dev.alloc<float>(mn * mn), b = dev.alloc<float>(mn * mn), c = dev.alloc<float>(mn * mn);
  q.write(ha, a);
  q.write(hb, b);
  const int mm_trials = std::max(1, std::min(trials, mn > 1024 ? 2 : trials));
  add_row("matmul_fp32", mn, mm_trials, [&] { lib::matmul(q, a, b, c, mn, mn, mn); }, [&] {
#pragma omp parallel for
            for (long long i = 0; i < m; ++i) {
              float* ci = &hc[i * m];
              std::fill(ci, ci + m, 0.0f);
              for (long long p = 0; p < m; ++p) {
                const float aip = ha[i * m + p];
                const float* bp = &hb[p * m];
                for (long long j = 0; j < m; ++j) ci[j] += aip * bp[j];
              }
            }
          });
  q.finish();
  return {{"threads", omp_get_max_threads()}, {"rows", rows}};
}
#endif

}  // namespace

nlohmann::json measure_kernel_baselines(const Device& device, Queue& timed, std::size_t side, std::size_t matmul_n,
                                        int trials, int batch, const std::function<void(const std::string&)>& say) {
  nlohmann::json j;
  j["device_type"] = to_string(device.properties().type);
  j["naive"] = naive_rows(device, timed, side * side, trials, batch, say);
  if (device.properties().type != DeviceType::cpu) {
    j["openmp"] = {{"skipped", std::string("not a CPU device (") + to_string(device.properties().type) + ")"}};
    return j;
  }
#ifdef GPURT_BENCH_OPENMP
  j["openmp"] = openmp_rows(device, timed, side, matmul_n, trials, batch, say);
#else
  (void)matmul_n;
  j["openmp"] = {{"skipped", "this gpurt was built without OpenMP (find_package(OpenMP) found none)"}};
#endif
  return j;
}

}  // namespace gpurt::bench
