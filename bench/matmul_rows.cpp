// The matmul rows (matmul_rows.hpp). Both sides are timed the same way, host wall time of `reps`
// calls back to back after one untimed call, to the queue's end (RawBaseline::gemm_gflops does the
// same on its own queue), so that the vendor path against the raw library (target 0.97) compares
// like with like. `reps` is chosen per row from one timed call so that a trial takes about 0.25 s
// (0.02 s with --quick), 1 to 1000 calls, the same for every side of the row (small products: many
// calls, so that the one wait at the end weighs little beside the calls' own cost).
#include "matmul_rows.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "gpurt/library.hpp"
#include "stats.hpp"

namespace gpurt::bench {

namespace {

using clock_type = std::chrono::steady_clock;
using Precision = lib::Precision;

struct Shape {
  const char* name;
  std::size_t m, n, k;
};

// The shapes: square (4096^3 on GPUs, 1024^3 on CPU devices, 256^3 with --quick), tall-skinny (a
// 16384 x 4096 matrix times 4096 x 64, as in a projection of many rows; scaled alike) and small.
// On a CPU device the portable TF32 and bf16 paths run at a few GFLOP/s per core, so that 2048^3
// made the matmul rows alone take minutes; 1024^3 is still far beyond the caches.
std::vector<Shape> shapes(const Device& device, bool quick) {
  if (quick) return {{"square", 256, 256, 256}, {"tall_skinny", 1024, 64, 256}, {"small", 64, 64, 64}};
  if (device.properties().type == DeviceType::cpu)
    return {{"square", 1024, 1024, 1024}, {"tall_skinny", 4096, 64, 1024}, {"small", 256, 256, 256}};
  return {{"square", 4096, 4096, 4096}, {"tall_skinny", 16384, 64, 4096}, {"small", 256, 256, 256}};
}

RawBaseline::GemmPrecision raw_precision(Precision p) {
  return p == Precision::fp32   ? RawBaseline::GemmPrecision::fp32
         : p == Precision::tf32 ? RawBaseline::GemmPrecision::tf32
         : p == Precision::bf16 ? RawBaseline::GemmPrecision::bf16
                                : RawBaseline::GemmPrecision::fp64;
}

lib::Options options_of(lib::Implementation i) {
  lib::Options o;
  o.vendor = i == lib::Implementation::vendor ? lib::VendorLibraries::on : lib::VendorLibraries::off;
  return o;
}

// The buffers of one precision and shape, holding gemm_input() (the values the raw side
// multiplies), and one call of the precision's lib::matmul on them.
struct Operands {
  Precision precision;
  Shape s;
  Buffer<float> a, b, c;
  Buffer<std::uint16_t> a16, b16;
  Buffer<double> a64, b64, c64;

  Operands(const Device& d, Queue& q, Precision p, const Shape& shape) : precision(p), s(shape) {
    const RawBaseline::GemmPrecision raw = raw_precision(p);
    if (p == Precision::fp64) {
      a64 = d.alloc<double>(s.m * s.k), b64 = d.alloc<double>(s.k * s.n), c64 = d.alloc<double>(s.m * s.n);
      q.copy(gemm_input(raw, s.m * s.k, 1), a64.as<unsigned char>());
      q.copy(gemm_input(raw, s.k * s.n, 2), b64.as<unsigned char>());
    } else if (p == Precision::bf16) {
      a16 = d.alloc<std::uint16_t>(s.m * s.k), b16 = d.alloc<std::uint16_t>(s.k * s.n), c = d.alloc<float>(s.m * s.n);
      q.copy(gemm_input(raw, s.m * s.k, 1), a16.as<unsigned char>());
      q.copy(gemm_input(raw, s.k * s.n, 2), b16.as<unsigned char>());
    } else {
      a = d.alloc<float>(s.m * s.k), b = d.alloc<float>(s.k * s.n), c = d.alloc<float>(s.m * s.n);
      q.copy(gemm_input(raw, s.m * s.k, 1), a.as<unsigned char>());
      q.copy(gemm_input(raw, s.k * s.n, 2), b.as<unsigned char>());
    }
    q.finish();
  }

  lib::Implementation run(Queue& q, lib::Options o) const {
    switch (precision) {
      case Precision::fp64: return lib::matmul(q, a64, b64, c64, s.m, s.n, s.k, o);
      case Precision::bf16: return lib::matmul_bf16(q, a16, b16, c, s.m, s.n, s.k, o);
      case Precision::tf32: return lib::matmul_tf32(q, a, b, c, s.m, s.n, s.k, o);
      case Precision::fp32: break;
    }
    return lib::matmul(q, a, b, c, s.m, s.n, s.k, o);
  }

  // GFLOP/s of `reps` calls back to back and one wait.
  double gflops(Queue& q, lib::Options o, std::size_t reps) const {
    const auto t0 = clock_type::now();
    for (std::size_t i = 0; i < reps; ++i) run(q, o);
    q.finish();
    const double secs = std::chrono::duration<double>(clock_type::now() - t0).count();
    return 2.0 * static_cast<double>(s.m) * s.n * s.k * static_cast<double>(reps) / secs * 1e-9;
  }
};

// Largest |c - reference| / sum_k |a*b| over c = a * b for random a, b in [-1, 1) (384 x 320 x
// 512), against an fp64 reference of the inputs as the kernel sees them (bf16: rounded first).
double matmul_error(const Device& d, Queue& q, Precision precision, lib::Options o) {
  const std::size_t m = 384, n = 320, k = 512;
  std::vector<double> ha(m * k), hb(k * n);
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (auto* v : {&ha, &hb})
    for (double& e : *v) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      e = static_cast<double>(x >> 11) / 9007199254740992.0 * 2.0 - 1.0;
      if (precision != Precision::fp64) e = static_cast<float>(e);
      if (precision == Precision::bf16) e = lib::from_bf16(lib::to_bf16(static_cast<float>(e)));
    }
  std::vector<double> got(m * n);
  if (precision == Precision::fp64) {
    auto a = d.alloc<double>(m * k), b = d.alloc<double>(k * n), c = d.alloc<double>(m * n);
    q.copy(ha, a);
    q.copy(hb, b);
    lib::matmul(q, a, b, c, m, n, k, o);
    got = q.read(c);
  } else {
    std::vector<float> fa(ha.begin(), ha.end()), fb(hb.begin(), hb.end());
    auto c = d.alloc<float>(m * n);
    if (precision == Precision::bf16) {
      std::vector<std::uint16_t> a16(fa.size()), b16(fb.size());
      std::transform(fa.begin(), fa.end(), a16.begin(), lib::to_bf16);
      std::transform(fb.begin(), fb.end(), b16.begin(), lib::to_bf16);
      auto a = d.alloc<std::uint16_t>(a16.size()), b = d.alloc<std::uint16_t>(b16.size());
      q.copy(a16, a);
      q.copy(b16, b);
      lib::matmul_bf16(q, a, b, c, m, n, k, o);
    } else {
      auto a = d.alloc<float>(fa.size()), b = d.alloc<float>(fb.size());
      q.copy(fa, a);
      q.copy(fb, b);
      if (precision == Precision::tf32) lib::matmul_tf32(q, a, b, c, m, n, k, o);
      else lib::matmul(q, a, b, c, m, n, k, o);
    }
    const std::vector<float> r = q.read(c);
    got.assign(r.begin(), r.end());
  }
  double worst = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (std::size_t p = 0; p < k; ++p) {
        const double t = ha[i * k + p] * hb[p * n + j];
        ref += t;
        mag += std::abs(t);
      }
      worst = std::max(worst, std::abs(got[i * n + j] - ref) / mag);
    }
  return worst;
}

// The target of a row, or null: the vendor path >= 0.97 x the raw library at every shape;
// the portable kernels, at the square shape against cuBLAS, >= 0.75 (fp32) and >= 0.5 (TF32, bf16).
nlohmann::json target_of(Precision p, lib::Implementation i, const Shape& s, const std::string& raw_library) {
  if (i == lib::Implementation::vendor) return 0.97;
  if (raw_library != "cuBLAS" || std::string(s.name) != "square") return nullptr;
  if (p == Precision::fp32) return 0.75;
  if (p == Precision::tf32 || p == Precision::bf16) return 0.5;
  return nullptr;
}

// The keys of the runs without matmul rows, from the rows (matmul_rows.hpp).
void add_legacy_keys(nlohmann::json& j) {
  j["n"] = j["rows"].empty() ? nlohmann::json(0) : j["rows"][0]["m"];
  j["gflops"] = 0.0;  // stays 0 only when the square fp32 portable row was skipped
  j["milliseconds"] = 0.0;
  j["vendor_blas_gflops"] = nullptr;
  j["tensor"] = nlohmann::json::array();
  for (const auto& r : j["rows"]) {
    if (r["shape"] != "square" || r["implementation"] != "portable" || r.contains("skipped")) continue;
    const std::string p = r["precision"];
    const double gflops = r["gpurt"];
    const double n = r["m"];
    if (p == "fp32") {
      j["n"] = r["m"];
      j["gflops"] = gflops;
      j["milliseconds"] = gflops > 0 ? 2.0 * n * n * n / (gflops * 1e9) * 1e3 : 0.0;
      if (r.contains("max_error")) j["max_error"] = r["max_error"];
      if (r.contains("raw")) {
        j["vendor_blas_gflops"] = r["raw"];
        j["ratio_to_vendor_blas"] = r["ratio"];
      } else {
        j["vendor_blas_note"] = r["raw_skipped"];
      }
    } else if (p == "tf32" || p == "bf16") {
      nlohmann::json t{{"precision", p}, {"n", r["m"]}, {"gflops", gflops},
                       {"max_error", r.contains("max_error") ? r["max_error"] : nlohmann::json(0.0)}};
      if (r.contains("raw")) {
        t["vendor_blas_gflops"] = r["raw"];
        t["ratio_to_vendor_blas"] = r["ratio"];
      }
      j["tensor"].push_back(t);
    }
  }
}

}  // namespace

nlohmann::json measure_matmul_rows(const MatmulBench& b) {
  const DeviceProperties& props = b.device.properties();
  const std::string raw_library = b.raw.gemm_library();
  const double trial_seconds = b.quick ? 0.02 : 0.25;
  nlohmann::json rows = nlohmann::json::array();
  for (const Precision p : {Precision::fp32, Precision::tf32, Precision::bf16, Precision::fp64}) {
    // Which implementations run here, and each one's largest error (once per precision).
    std::vector<lib::Implementation> impls;
    nlohmann::json why_not = nlohmann::json::object(), error = nlohmann::json::object();
    for (const lib::Implementation i : {lib::Implementation::portable, lib::Implementation::vendor}) {
      try {
        (void)lib::matmul_implementation(b.device, p, options_of(i));
        b.say(std::string("matmul ") + lib::to_string(p) + " " + lib::to_string(i) + ": error against fp64");
        error[lib::to_string(i)] = matmul_error(b.device, b.queue, p, options_of(i));
        impls.push_back(i);
      } catch (const Error& e) {
        why_not[lib::to_string(i)] = e.message();
      }
    }
    for (const Shape& s : shapes(b.device, b.quick)) {
      nlohmann::json base{{"precision", lib::to_string(p)}, {"shape", s.name}, {"m", s.m}, {"n", s.n}, {"k", s.k},
                          {"unit", "GFLOP/s"}, {"raw_library", raw_library.empty() ? nlohmann::json() : nlohmann::json(raw_library)}};
      const std::size_t first = rows.size();
      for (const auto& [name, reason] : why_not.items()) {
        nlohmann::json row = base;
        row["implementation"] = name;
        row["skipped"] = reason;
        rows.push_back(row);
      }
      // Portable before vendor in each shape, whichever of them ran.
      const auto in_order = [&] {
        std::stable_sort(rows.begin() + static_cast<std::ptrdiff_t>(first), rows.end(),
                         [](const nlohmann::json& x, const nlohmann::json& y) {
                           return x["implementation"] == "portable" && y["implementation"] != "portable";
                         });
      };
      if (impls.empty()) continue;
      b.say(std::string("matmul ") + lib::to_string(p) + " " + s.name + " " + std::to_string(s.m) + "x" +
            std::to_string(s.n) + "x" + std::to_string(s.k));
      try {
        const Operands ops(b.device, b.queue, p, s);
        double slowest = 0;  // one untimed call (builds, first use), then one timed, per implementation
        for (const lib::Implementation i : impls) {
          ops.gflops(b.queue, options_of(i), 1);
          const double g = ops.gflops(b.queue, options_of(i), 1);
          slowest = std::max(slowest, 2.0 * s.m * s.n * s.k / (g * 1e9));
        }
        const std::size_t reps =
            static_cast<std::size_t>(std::clamp(std::round(trial_seconds / std::max(slowest, 1e-9)), 1.0, 1000.0));
        std::vector<std::vector<double>> g(impls.size());
        std::vector<double> r;
        std::string raw_skipped;  // the raw library's own reason, from its first call, when it cannot run
        for (int t = 0; t < b.trials; ++t) {
          for (std::size_t i = 0; i < impls.size(); ++i) g[i].push_back(ops.gflops(b.queue, options_of(impls[i]), reps));
          if (!raw_skipped.empty()) continue;
          try {
            r.push_back(b.raw.gemm_gflops(raw_precision(p), s.m, s.n, s.k, reps));
          } catch (const Error& e) {
            raw_skipped = e.message();
            r.clear();
          }
        }
        for (std::size_t i = 0; i < impls.size(); ++i) {
          nlohmann::json row = base;
          const char* name = lib::to_string(impls[i]);
          if (raw_skipped.empty()) {
            row.update(paired(g[i], r));
            const nlohmann::json target = target_of(p, impls[i], s, raw_library);
            row["target"] = target;
            row["met"] = target.is_null() ? nlohmann::json() : nlohmann::json(row["ratio"].get<double>() >= target.get<double>());
          } else {
            const auto [lo, hi] = std::minmax_element(g[i].begin(), g[i].end());
            row.update({{"gpurt", median(g[i])}, {"gpurt_min", *lo}, {"gpurt_max", *hi}, {"gpurt_trials", g[i]},
                        {"trials", g[i].size()}, {"raw_skipped", raw_skipped}});
          }
          row["implementation"] = name;
          row["reps_per_trial"] = reps;
          row["max_error"] = error[name];
          rows.push_back(row);
        }
      } catch (const Error& e) {  // e.g. out of device memory for a shape: the rows say so
        for (const lib::Implementation i : impls) {
          nlohmann::json row = base;
          row["implementation"] = lib::to_string(i);
          row["skipped"] = e.message();
          rows.push_back(row);
        }
      }
      in_order();
    }
  }
  nlohmann::json j{{"rows", rows},
                   {"timing", "host wall time of reps_per_trial calls back to back after one untimed call, to the "
                              "queue's end, on both sides; gpurt and the raw library alternate trial by trial; inputs: the same "
                              "random values in [-1, 1) on both sides"},
                   {"fp64", props.fp64}};
  add_legacy_keys(j);
  return j;
}

}  // namespace gpurt::bench
