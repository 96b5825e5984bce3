// gpurt-tune-matmul: times the build-time variants of the portable fp32 matmul
// (kernels/matmul.gpurt: MM_BM, MM_BN, MM_BK, MM_TM, MM_TN, MM_VEC, MM_DB) on one device, each
// checked first against a CPU reference on an odd shape (no vector path) and an aligned one with a
// partial k tile (vector path), then timed at n x n x n (median of the device times of `reps`
// launches after two untimed ones, gpurt events). On CUDA the same run times cuBLAS SGEMM through
// the bench's raw baseline (bench/raw: host wall time of back-to-back calls, best of three), so each
// variant's ratio to it comes from one process. Prints a table; --json FILE writes it.
//
//   gpurt-tune-matmul --device cuda:0 --json matmul-cuda.json
//   gpurt-tune-matmul --device opencl:0 --quick          (small sizes, four variants, for a CPU device)
//   gpurt-tune-matmul --device cuda:0 --only "bk16"      (the variants whose name has "bk16")
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "embedded_kernels.hpp"
#include "gpurt/gpurt.hpp"
#include "gpurt/library.hpp"
#include "raw/baseline.hpp"

namespace {

using gpurt::Buffer;
using gpurt::Device;
using gpurt::Dim3;
using gpurt::Queue;

struct Variant {
  int bm, bn, bk, tm, tn, vec, db, minb, swz = 1;
  std::string name() const {
    return std::to_string(bm) + "x" + std::to_string(bn) + " bk" + std::to_string(bk) + " " + std::to_string(tm) +
           "x" + std::to_string(tn) + (vec ? " vec" : " scalar") + (db ? " db" : " single") +
           " minb" + std::to_string(minb) +
           (swz > 1 ? " swz" + std::to_string(swz) : "");
  }
  Dim3 group() const { return Dim3(bn / tn, bm / tm); }
};

// The candidates: the recipe's 128x128 / 128x256 / 256x128 block tiles at BK 8 and 16 with 8x8 or
// 8x16 register tiles, each switch of the default turned off once, and smaller tiles for small
// devices. The first is the kernel's default. minb (MM_MINB, CUDA launch bounds): 2 caps a group
// of 256 at 128 registers (ptxas spills a few bytes at 128x128), 1 lets it use up to 255. swz
// (MM_SWZ): block rows per band of the L2-friendly group order.
const std::vector<Variant> candidates = {
    {128, 128, 8, 8, 8, 1, 1, 2},    {128, 128, 8, 8, 8, 1, 1, 1},    {128, 128, 8, 8, 8, 0, 1, 2},
    {128, 128, 8, 8, 8, 1, 0, 2},    {128, 128, 16, 8, 8, 1, 1, 1},   {128, 128, 16, 8, 8, 1, 0, 2},
    {128, 256, 8, 8, 16, 1, 1, 1},   {256, 128, 8, 16, 8, 1, 1, 1},   {128, 256, 16, 8, 16, 1, 0, 1},
    {256, 128, 16, 16, 8, 1, 0, 1},  {128, 64, 8, 8, 4, 1, 1, 2},     {64, 64, 8, 4, 4, 1, 1, 2},
    {64, 64, 16, 4, 4, 1, 1, 2},     {128, 128, 8, 8, 8, 1, 1, 2, 8}, {128, 128, 8, 8, 8, 1, 1, 1, 8},
    {128, 128, 16, 8, 8, 1, 1, 1, 8}, {64, 64, 8, 4, 4, 1, 1, 2, 8},
};

struct Matrices {
  std::size_t m, n, k;
  std::vector<float> a, b, ref;
};

Matrices make_case(std::size_t m, std::size_t n, std::size_t k, std::mt19937& rng) {
  Matrices c{m, n, k, std::vector<float>(m * k), std::vector<float>(k * n), std::vector<float>(m * n)};
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  for (auto& x : c.a) x = d(rng);
  for (auto& x : c.b) x = d(rng);
  std::vector<double> row(n);
  for (std::size_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0);
    for (std::size_t p = 0; p < k; ++p) {
      const double av = c.a[i * k + p];
      const float* br = &c.b[p * n];
      for (std::size_t j = 0; j < n; ++j) row[j] += av * br[j];
    }
    for (std::size_t j = 0; j < n; ++j) c.ref[i * n + j] = static_cast<float>(row[j]);
  }
  return c;
}

void launch(Queue& q, const gpurt::Kernel& kern, const Variant& v, const Buffer<float>& a, const Buffer<float>& b,
            const Buffer<float>& c, std::size_t m, std::size_t n, std::size_t k) {
  const Dim3 groups((n + v.bn - 1) / v.bn, (m + v.bm - 1) / v.bm);
  q.launch(kern, gpurt::LaunchConfig(groups, v.group()), a, b, c, static_cast<std::uint32_t>(m),
           static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(k));
}

// Largest |gpu - ref| over the case, the odd offset views included: a, b and c are views starting
// one element into their buffers, so on every backend the kernel must also be right unaligned.
double max_error(Queue& q, const gpurt::Kernel& kern, const Variant& v, const Matrices& c, std::size_t offset) {
  const Device dev = q.device();
  Buffer<float> a = dev.alloc<float>(c.a.size() + offset), b = dev.alloc<float>(c.b.size() + offset),
                out = dev.alloc<float>(c.ref.size() + offset);
  Buffer<float> av = a.view(offset, c.a.size()), bv = b.view(offset, c.b.size()),
                ov = out.view(offset, c.ref.size());
  q.write(c.a, av);
  q.write(c.b, bv);
  q.fill(ov, std::nanf(""));
  launch(q, kern, v, av, bv, ov, c.m, c.n, c.k);
  const std::vector<float> got = q.read(ov);
  double err = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(static_cast<double>(got[i]) - c.ref[i]);
    err = std::isnan(e) ? INFINITY : std::max(err, e);
  }
  return err;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

struct Args {
  std::string device;
  std::string json;
  std::string only;  // run only the variants whose name contains this
  bool quick = false;
  std::size_t size = 4096;
  std::size_t reps = 7;
};

Args parse(int argc, char** argv) {
  Args a;
  bool size_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(s + " needs a value");
      return argv[++i];
    };
    if (s == "--device") a.device = value();
    else if (s == "--json") a.json = value();
    else if (s == "--only") a.only = value();
    else if (s == "--quick") a.quick = true;
    else if (s == "--size") a.size = std::stoul(value()), size_given = true;
    else if (s == "--reps") a.reps = std::max<std::size_t>(1, std::stoul(value()));
    else
      throw std::runtime_error("unknown argument '" + s +
                               "'; use --device SEL, --json FILE, --quick, --size N, --reps N (5 or more; --quick takes at most 3), --only TEXT");
  }
  if (a.quick && !size_given) a.size = 256;
  a.reps = a.quick ? std::min<std::size_t>(a.reps, 3) : std::max<std::size_t>(a.reps, 5);
  return a;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args args = parse(argc, argv);
  const Device dev = args.device.empty() ? gpurt::default_device() : gpurt::device(args.device);
  Queue q = dev.create_queue();
  std::printf("gpurt-tune-matmul on %s, timed at %zu^3 (median of %zu)\n", dev.description().c_str(), args.size,
              args.reps);
  std::mt19937 rng(21);
  const Matrices odd = args.quick ? make_case(67, 45, 131, rng) : make_case(509, 263, 1031, rng);
  const Matrices even = args.quick ? make_case(256, 256, 132, rng) : make_case(512, 512, 260, rng);
  const std::size_t n = args.size;
  const double flops = 2.0 * static_cast<double>(n) * n * n;

  double cublas = 0;
  std::string cublas_note;
  try {
    auto raw = gpurt::bench::open_raw_baseline(dev);
    std::vector<double> runs;
    for (int i = 0; i < 3; ++i)
      runs.push_back(raw->gemm_gflops(gpurt::bench::RawBaseline::GemmPrecision::fp32, n, n, n, args.reps));
    cublas = *std::max_element(runs.begin(), runs.end());
    std::printf("cuBLAS SGEMM: %.0f GFLOP/s\n", cublas);
  } catch (const gpurt::Error& e) {
    cublas_note = e.what();
    std::printf("no vendor SGEMM to compare with: %s\n", cublas_note.c_str());
  }

  Buffer<float> a = dev.alloc<float>(n * n), b = dev.alloc<float>(n * n), c = dev.alloc<float>(n * n);
  q.fill(a, 0.0078125f);
  q.fill(b, 0.0078125f);
  nlohmann::json rows = nlohmann::json::array();
  std::printf("%-36s %10s %8s %10s  %s\n", "variant", "GFLOP/s", "x cuBLAS", "max error", "status");
  auto report = [&](const std::string& name, const nlohmann::json& defines, double gflops, double err,
                    const std::string& status) {
    const double ratio = cublas > 0 ? gflops / cublas : 0.0;
    std::printf("%-36s %10.1f %8.3f %10.2e  %s\n", name.c_str(), gflops, ratio, err, status.c_str());
    std::fflush(stdout);
    nlohmann::json row{{"variant", name}, {"defines", defines}, {"gflops", gflops}, {"max_error", err},
                       {"pass", status == "pass"}, {"status", status}};
    if (cublas > 0) row["ratio_to_cublas"] = ratio;
    rows.push_back(row);
  };
  // --quick (a CPU device, a CI machine): the default, two of its switches off, small tiles in bands.
  std::vector<Variant> variants = candidates;
  if (args.quick) variants = {candidates[0], candidates[2], candidates[3], candidates[16]};
  for (const Variant& v : variants) {
    if (!args.only.empty() && v.name().find(args.only) == std::string::npos) continue;
    const nlohmann::json defines{{"MM_BM", v.bm}, {"MM_BN", v.bn}, {"MM_BK", v.bk}, {"MM_TM", v.tm},
                                 {"MM_TN", v.tn}, {"MM_VEC", v.vec}, {"MM_DB", v.db}, {"MM_MINB", v.minb}, {"MM_SWZ", v.swz}};
    gpurt::Kernel kern;
    try {
      gpurt::BuildOptions options;
      for (const auto& [name, value] : defines.items()) options.defines.push_back({name, value.dump()});
      kern = dev.build({gpurt::SourceLanguage::portable, gpurt::lib::embedded::matmul, "matmul.gpurt"}, options)
                 .kernel("gpurt_matmul");
      if (kern.max_group_size() < v.group().x * v.group().y) {
        report(v.name(), defines, 0, 0, "skipped: group of " + std::to_string(v.group().x * v.group().y) +
                                            " items, kernel allows " + std::to_string(kern.max_group_size()));
        continue;
      }
      // Tolerance: fp32 rounding over k products of values in [-1, 1].
      const double err = std::max({max_error(q, kern, v, odd, 1), max_error(q, kern, v, even, 0),
                                   max_error(q, kern, v, even, 1)});
      const double tol = 1e-5 * static_cast<double>(std::max(odd.k, even.k));
      if (!(err <= tol)) {
        report(v.name(), defines, 0, err, "FAIL (error above " + std::to_string(tol) + ")");
        continue;
      }
      for (int w = 0; w < 2; ++w) launch(q, kern, v, a, b, c, n, n, n);
      std::vector<double> ms;
      for (std::size_t r = 0; r < args.reps; ++r) {
        const gpurt::Event start = q.record();
        launch(q, kern, v, a, b, c, n, n, n);
        const gpurt::Event end = q.record();
        q.finish();
        ms.push_back(gpurt::elapsed_ms(start, end));
      }
      report(v.name(), defines, flops / (median(ms) * 1e-3) * 1e-9, err, "pass");
    } catch (const gpurt::Error& e) {
      std::string what = e.what();
      what = what.substr(0, what.find('\n'));
      report(v.name(), defines, 0, 0, "error: " + what);
    }
  }
  // The library's own call with its built-in choice, for the record.
  {
    gpurt::lib::Options portable;
    portable.vendor = gpurt::lib::VendorLibraries::off;
    gpurt::lib::matmul(q, a, b, c, n, n, n, portable);
    std::vector<double> ms;
    for (std::size_t r = 0; r < args.reps; ++r) {
      const gpurt::Event start = q.record();
      gpurt::lib::matmul(q, a, b, c, n, n, n, portable);
      const gpurt::Event end = q.record();
      q.finish();
      ms.push_back(gpurt::elapsed_ms(start, end));
    }
    report("lib::matmul (portable default)", nlohmann::json::object(), flops / (median(ms) * 1e-3) * 1e-9, 0,
           "pass");
  }
  // The fastest variant that passed (the library's own row aside).
  std::string best;
  double best_gflops = 0;
  for (const auto& row : rows)
    if (row["pass"].get<bool>() && !row["defines"].empty() && row["gflops"].get<double>() > best_gflops)
      best = row["variant"].get<std::string>(), best_gflops = row["gflops"].get<double>();
  std::printf("best: %s, %.1f GFLOP/s%s\n", best.empty() ? "none" : best.c_str(), best_gflops,
              cublas > 0 ? (", " + std::to_string(best_gflops / cublas) + " x cuBLAS").c_str() : "");
  if (!args.json.empty()) {
    nlohmann::json out{{"device", dev.description()}, {"selector", args.device}, {"size", n},
                       {"reps", args.reps},           {"cublas_gflops", cublas}, {"variants", rows},
                       {"best", best},               {"best_gflops", best_gflops}};
    if (!cublas_note.empty()) out["cublas_note"] = cublas_note;
    std::ofstream(args.json) << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";  // device names need not be UTF-8
    std::printf("wrote %s\n", args.json.c_str());
  }
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "gpurt-tune-matmul: %s\n", e.what());
  return 1;
}
