// gpurt-tune-tensor: every tensor-core matmul kernel of kernels/cuda/matmul_tensor.cu (the
// variant table of matmul_tensor.h) against cuBLAS at the same precision, on the first CUDA device.
//
//   gpurt-tune-tensor [--json FILE] [--size N] [--big] [--reps R] [--only TEXT] [--fatbin PATH]
//   gpurt-tune-tensor --selftest     (the result checker alone, on the CPU)
//
// For TF32 (fp32 in memory) and bf16 inputs, fp32 accumulation: each kernel is checked against a
// CPU reference in double on two odd shapes (509 x 263 x 1031: element loads; 517 x 520 x 1032:
// 16-byte copies with partial blocks) and on 8 rows of the timed product, within the documented
// bound (library.hpp: 2^-10 of s_ij = sum |a_ip b_pj| for TF32, k 2^-24 s_ij for bf16 inputs that
// are exact in bf16), then timed at N^3 (default 4096; --big adds 8192): events around each launch,
// median of R (default 9) after 2 warm-ups; cuBLAS (cublasGemmEx, CUBLAS_COMPUTE_32F_FAST_TF32 /
// bf16 inputs with CUBLAS_COMPUTE_32F) timed the same way in the same run. Each kernel and each
// cuBLAS run is a child process of this program (a kernel that faults poisons only its own CUDA
// context): the parent prints a table and, with --json, writes the figures. Kernels built for
// sm_90a (wgmma) run only where the device reports sm_90. The kernels come from the nvcc-built
// fatbin in the build tree (kernels/matmul_tensor.fatbin), loaded through gpurt's public API as
// SourceLanguage::cubin, exactly as libgpurt-lib loads its embedded copy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <gpurt/gpurt.hpp>

#include "../../kernels/cuda/matmul_tensor.h"
#include "raw/tune_cublas.hpp"

namespace {

using gpurt_tensor::Variant;

struct Args {
  std::string json, only, fatbin = GPURT_TUNE_FATBIN, self;
  std::vector<int> sizes{4096};
  int reps = 9;
  std::string child;  // set in a child: the entry it runs
};

// ---- Inputs and the reference.
struct Rng {
  std::uint64_t s;
  float next() {  // uniform in [-1, 1)
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return float(std::int32_t(s >> 32)) * (1.0f / 2147483648.0f);
  }
};

std::uint16_t bf16_bits(float x) {  // truncation: the value is then exact in bf16
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  return std::uint16_t(u >> 16);
}
float bf16_value(std::uint16_t h) {
  const std::uint32_t u = std::uint32_t(h) << 16;
  float x;
  std::memcpy(&x, &u, 4);
  return x;
}

// Host copies of a (m x k) and b (k x n) as floats (for bf16: the exact bf16 values).
struct Inputs {
  std::vector<float> a, b;
  std::vector<std::uint16_t> a16, b16;
};
Inputs make_inputs(bool bf16, int m, int n, int k, std::uint64_t seed) {
  Inputs in;
  Rng r{seed};
  in.a.resize(std::size_t(m) * k);
  in.b.resize(std::size_t(k) * n);
  for (float& x : in.a) x = r.next();
  for (float& x : in.b) x = r.next();
  if (bf16) {
    in.a16.resize(in.a.size());
    in.b16.resize(in.b.size());
    for (std::size_t i = 0; i < in.a.size(); ++i) in.a[i] = bf16_value(in.a16[i] = bf16_bits(in.a[i]));
    for (std::size_t i = 0; i < in.b.size(); ++i) in.b[i] = bf16_value(in.b16[i] = bf16_bits(in.b[i]));
  }
  return in;
}

std::string first_wrong;  // the first element worst_ratio found out of bounds, if any

// Largest error / bound over rows [r0, r1) of c: bound = 2^-10 s (TF32) or (k 2^-24 + 2^-20) s
// (bf16). A value above 1 fails; NaN fails.
double worst_ratio(const Inputs& in, const std::vector<float>& c, bool bf16, int m, int n, int k, int r0, int r1) {
  (void)m;
  double worst = 0;
  std::vector<double> sum(n), mag(n);
  for (int i = r0; i < r1; ++i) {
    std::fill(sum.begin(), sum.end(), 0.0);
    std::fill(mag.begin(), mag.end(), 0.0);
    for (int p = 0; p < k; ++p) {
      const double av = in.a[std::size_t(i) * k + p];
      const float* brow = &in.b[std::size_t(p) * n];
      for (int j = 0; j < n; ++j) {
        const double t = av * brow[j];
        sum[j] += t;
        mag[j] += std::fabs(t);
      }
    }
    for (int j = 0; j < n; ++j) {
      const double bound = (bf16 ? k * std::ldexp(1.0, -24) + std::ldexp(1.0, -20) : std::ldexp(1.0, -10)) * mag[j] + 1e-30;
      const double got = c[std::size_t(i) * n + j];
      const double ratio = std::fabs(got - sum[j]) / bound;
      if (!(ratio <= 1.0) && first_wrong.empty()) {  // where it first goes wrong: a clue to the layout
        char text[160];
        std::snprintf(text, sizeof text, "c[%d][%d] = %.6g, expected %.6g", i, j, got, sum[j]);
        first_wrong = text;
      }
      if (!(ratio <= worst)) worst = std::isnan(ratio) ? INFINITY : std::max(worst, ratio);
    }
  }
  return worst;
}

// --selftest (no GPU): the checker passes an fp32-accumulated product of TF32-truncated or bf16
// inputs and fails one wrong element and a NaN. 0 when it behaves.
int selftest() {
  int bad = 0;
  for (bool bf16 : {false, true}) {
    const int m = 37, n = 29, k = 1031;
    const Inputs in = make_inputs(bf16, m, n, k, 5);
    std::vector<float> c(std::size_t(m) * n);
    auto tf32 = [](float x) {
      std::uint32_t u;
      std::memcpy(&u, &x, 4);
      u &= 0xFFFFE000u;
      std::memcpy(&x, &u, 4);
      return x;
    };
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        float sum = 0;
        for (int p = 0; p < k; ++p) {
          const float x = in.a[std::size_t(i) * k + p], y = in.b[std::size_t(p) * n + j];
          sum += bf16 ? x * y : tf32(x) * tf32(y);
        }
        c[std::size_t(i) * n + j] = sum;
      }
    const double good = worst_ratio(in, c, bf16, m, n, k, 0, m);
    std::vector<float> wrong = c;
    wrong[std::size_t(m / 2) * n + 3] += 1.0f;  // TF32 bound here: about 2^-10 * 1031 / 4
    const double w = worst_ratio(in, wrong, bf16, m, n, k, 0, m);
    wrong[7] = NAN;
    const double nan = worst_ratio(in, wrong, bf16, m, n, k, 0, 1);
    std::printf("selftest %s: right product %.3g, one element off by 1 %.3g, NaN %.3g (bound 1)\n",
                bf16 ? "bf16" : "tf32", good, w, nan);
    bad += !(good <= 1.0) + !(w > 1.0) + !(nan > 1.0);
  }
  std::printf("%s\n", bad ? "selftest FAILED" : "selftest OK");
  return bad ? 1 : 0;
}

// ---- One child: one entry ("cublas_tf32", "cublas_bf16" or a kernel name).
struct Result {
  double ms = 0, gflops = 0, err = 0;
  bool pass = false;
};

gpurt::Device cuda_device() {
  for (const gpurt::Device& d : gpurt::devices())
    if (d.backend() == "cuda") return d;
  throw gpurt::Error(gpurt::ErrorCategory::unsupported, "no CUDA device (gpurt info says why)");
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw gpurt::Error(gpurt::ErrorCategory::invalid_argument, "cannot read the fatbin '" + path + "'; pass --fatbin PATH");
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

template <class T>
double median_ms(gpurt::Queue& q, int reps, T&& enqueue) {
  for (int i = 0; i < 2; ++i) enqueue();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const gpurt::Event e0 = q.record();
    enqueue();
    const gpurt::Event e1 = q.record();
    t.push_back(gpurt::elapsed_ms(e0, e1));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class In>
int run_child_typed(const Args& args, const gpurt::Device& dev, const Variant* v, bool bf16) {
  gpurt::Queue q = dev.create_queue();
  gpurt::Kernel kern, round_bt, round_a;
  gpurt::Buffer<In> bt, ar;  // B^T and A rounded, for the variants that read them; the pre-passes are timed with them
  std::unique_ptr<gpurt::bench::tune::CublasGemm> blas;
  if (v) {
    const gpurt::Program prog = dev.build({gpurt::SourceLanguage::cubin, read_file(args.fatbin), "matmul_tensor.fatbin"});
    kern = prog.kernel(v->kernel);
    if (v->transposed_b) {
      round_bt = prog.kernel(gpurt_tensor::round_bt_kernel);
      round_a = prog.kernel(gpurt_tensor::round_kernel);
    }
  } else {
    blas = std::make_unique<gpurt::bench::tune::CublasGemm>(q);
  }
  auto product = [&](const gpurt::Buffer<In>& a, const gpurt::Buffer<In>& b, const gpurt::Buffer<float>& c, int m, int n,
                     int k) {
    if (v) {
      const std::size_t groups = std::size_t((m + v->bm - 1) / v->bm) * std::size_t((n + v->bn - 1) / v->bn);
      const gpurt::Buffer<In>* aa = &a;
      const gpurt::Buffer<In>* bb = &b;
      if (v->transposed_b) {
        const std::size_t elems = std::size_t(m) * k;
        if (ar.size() < elems) ar = dev.alloc<In>(elems);
        q.launch(round_a, gpurt::LaunchConfig(gpurt::Dim3(std::max<std::size_t>(1, std::min<std::size_t>((elems + 255) / 256,
                                                                                                      32 * dev.properties().compute_units))),
                                              gpurt::Dim3(256)),
                 a, ar, std::uint64_t(elems));
        aa = &ar;
        if (bt.size() < std::size_t(n) * k) bt = dev.alloc<In>(std::size_t(n) * k);
        const std::size_t tiles = std::size_t((n + 31) / 32) * std::size_t((k + 31) / 32);
        q.launch(round_bt, gpurt::LaunchConfig(gpurt::Dim3(tiles), gpurt::Dim3(256)), b, bt, std::uint32_t(k),
                 std::uint32_t(n));
        bb = &bt;
      }
      q.launch(kern, gpurt::LaunchConfig(gpurt::Dim3(groups), gpurt::Dim3(std::size_t(v->threads)), std::size_t(v->shared_bytes)),
               *aa, *bb, c, std::uint32_t(m), std::uint32_t(n), std::uint32_t(k));
    } else if constexpr (sizeof(In) == 4) {
      blas->tf32(a, b, c, m, n, k);
    } else {
      blas->bf16(a, b, c, m, n, k);
    }
  };
  auto upload = [&](const Inputs& in, gpurt::Buffer<In>& a, gpurt::Buffer<In>& b) {
    a = dev.alloc<In>(in.a.size());
    b = dev.alloc<In>(in.b.size());
    if constexpr (sizeof(In) == 4) {
      q.write(in.a, a);
      q.write(in.b, b);
    } else {
      q.write(in.a16, a);
      q.write(in.b16, b);
    }
  };
  double worst = 0;
  // Correctness on the odd shapes.
  const int shapes[2][3] = {{509, 263, 1031}, {517, 520, 1032}};
  for (int s = 0; s < 2; ++s) {
    const int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
    const Inputs in = make_inputs(bf16, m, n, k, 17 + s);
    gpurt::Buffer<In> a, b;
    upload(in, a, b);
    auto c = dev.alloc<float>(std::size_t(m) * n);
    q.fill(c, NAN);
    product(a, b, c, m, n, k);
    const std::vector<float> got = q.read(c);
    const double w = worst_ratio(in, got, bf16, m, n, k, 0, m);
    std::printf("check %s %dx%dx%d: worst error / bound %.3g%s%s\n", v ? v->kernel : "cublas", m, n, k, w,
                first_wrong.empty() ? "" : "; first wrong: ", first_wrong.c_str());
    first_wrong.clear();
    worst = std::max(worst, w);
  }
  // Timing at each size, and 8 rows of its result checked.
  std::ostringstream out;
  for (int size : args.sizes) {
    const Inputs in = make_inputs(bf16, size, size, size, 99);
    gpurt::Buffer<In> a, b;
    upload(in, a, b);
    auto c = dev.alloc<float>(std::size_t(size) * size);
    q.fill(c, NAN);
    const double ms = median_ms(q, args.reps, [&] { product(a, b, c, size, size, size); });
    const std::vector<float> got = q.read(c);
    for (int r0 : {0, size / 2 - 3, size - 4}) {
      const int r1 = r0 == size / 2 - 3 ? r0 + 3 : r0 + (r0 == 0 ? 1 : 4);
      worst = std::max(worst, worst_ratio(in, got, bf16, size, size, size, r0, r1));
    }
    const double gflops = 2.0 * double(size) * size * size / (ms * 1e-3) * 1e-9;
    out << "RESULT " << size << ' ' << ms << ' ' << gflops << ' ' << worst << ' ' << (worst <= 1.0 ? 1 : 0) << '\n';
  }
  if (!first_wrong.empty()) std::printf("timed product, first wrong: %s\n", first_wrong.c_str());
  std::fputs(out.str().c_str(), stdout);
  return 0;
}

int run_child(const Args& args) {
  const gpurt::Device dev = cuda_device();
  const Variant* v = nullptr;
  bool bf16 = args.child == "cublas_bf16";
  if (args.child.rfind("cublas_", 0) != 0) {
    for (const Variant& x : gpurt_tensor::variants)
      if (args.child == x.kernel) v = &x;
    if (!v) throw gpurt::Error(gpurt::ErrorCategory::invalid_argument, "no kernel named '" + args.child + "'");
    bf16 = v->elem_bytes == 2;
    if (v->sm90a && dev.properties().architecture != "sm_90") {
      std::printf("SKIP needs sm_90 (Hopper wgmma); the device is %s\n", dev.properties().architecture.c_str());
      return 0;
    }
    if (std::size_t(v->shared_bytes) > dev.properties().max_local_memory) {
      std::printf("SKIP needs %d bytes of shared memory per group; the device offers %zu\n", v->shared_bytes,
                  std::size_t(dev.properties().max_local_memory));
      return 0;
    }
  }
  return bf16 ? run_child_typed<std::uint16_t>(args, dev, v, true) : run_child_typed<float>(args, dev, v, false);
}

// ---- The parent: one child per entry, a table, JSON.
struct Row {
  std::string name, precision, status;  // status: ok, FAIL (wrong results), error (fault or no result), skip
  std::string note;                      // why: the child's last line, for error and skip
  int size = 0;
  double ms = 0, gflops = 0, err = 0, ratio = 0;
};

std::string quote(const std::string& s) {  // for the shell: single quotes
  std::string r = "'";
  for (char ch : s) r += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return r + "'";
}

std::vector<Row> run_entry(const Args& args, const std::string& entry, const std::string& precision) {
  std::string cmd = quote(args.self) + " --child " + quote(entry) + " --fatbin " + quote(args.fatbin) + " --reps " +
                    std::to_string(args.reps);
  for (int s : args.sizes) cmd += " --size " + std::to_string(s);
  // A kernel that never ends costs 30 s (60 with sizes above 4096), not the run.
  const bool big = std::any_of(args.sizes.begin(), args.sizes.end(), [](int s) { return s > 4096; });
  if (std::system("command -v timeout > /dev/null 2>&1") == 0) cmd = (big ? "timeout 60 " : "timeout 30 ") + cmd;
  cmd += " 2>&1";
  std::vector<Row> rows;
  std::string log, wrong_note;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, p)) {
      log += line;
      if (std::strstr(line, "first wrong")) {
        wrong_note = line;
        while (!wrong_note.empty() && wrong_note.back() == '\n') wrong_note.pop_back();
      }
      Row r;
      r.name = entry, r.precision = precision;
      int pass = 0;
      char tag[16];
      if (std::sscanf(line, "%15s %d %lf %lf %lf %d", tag, &r.size, &r.ms, &r.gflops, &r.err, &pass) == 6 &&
          std::string(tag) == "RESULT") {
        r.status = pass ? "ok" : "FAIL";
        if (!pass) r.note = wrong_note;
        rows.push_back(r);
      } else if (std::strncmp(line, "SKIP", 4) == 0) {
        r.status = "skip";
        r.note = line + 5;
        while (!r.note.empty() && r.note.back() == '\n') r.note.pop_back();
        rows.push_back(r);
      }
    }
    const int rc = ::pclose(p);
    if (rows.empty()) {
      Row r;
      r.name = entry, r.precision = precision, r.status = "error";
      const std::size_t end = log.find_last_not_of("\n");
      const std::size_t start = end == std::string::npos ? 0 : log.rfind('\n', end);
      r.note = end == std::string::npos ? "no output" : log.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
      rows.push_back(r);
      std::fprintf(stderr, "%s: no result (exit status %d); its output:\n%s\n", entry.c_str(), rc, log.c_str());
    }
  }
  return rows;
}

std::string escape(const std::string& s) {
  std::string r;
  for (char ch : s)
    if (ch == '"' || ch == '\\') r += '\\', r += ch;
    else if (static_cast<unsigned char>(ch) >= 0x20) r += ch;
  return r;
}

void write_json(const std::string& path, const std::vector<Row>& rows, const std::string& device) {
  std::ofstream f(path);
  f << "{\n  \"device\": \"" << device << "\",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    f << "    {\"kernel\": \"" << r.name << "\", \"precision\": \"" << r.precision << "\", \"size\": " << r.size
      << ", \"status\": \"" << r.status << "\", \"ms\": " << r.ms << ", \"gflops\": " << r.gflops
      << ", \"ratio_to_cublas\": " << r.ratio << ", \"max_error_over_bound\": " << (std::isfinite(r.err) ? r.err : 1e300)
      << ", \"pass\": " << (r.status == "ok" ? "true" : "false") << ", \"note\": \"" << escape(r.note) << "\"}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  f << "  ]\n}\n";
}

int parent(const Args& args) {
  std::string device = "unknown";
  std::vector<Row> all;
  for (const char* precision : {"tf32", "bf16"}) {
    const bool bf16 = std::string(precision) == "bf16";
    std::vector<Row> rows = run_entry(args, std::string("cublas_") + precision, precision);
    std::vector<Row> blas = rows;
    for (const Variant& v : gpurt_tensor::variants)
      if ((v.elem_bytes == 2) == bf16 && (args.only.empty() || std::string(v.kernel).find(args.only) != std::string::npos))
        for (Row& r : run_entry(args, v.kernel, precision)) rows.push_back(r);
    for (Row& r : rows)
      for (const Row& b : blas)
        if (b.size == r.size && b.gflops > 0) r.ratio = r.gflops / b.gflops;
    all.insert(all.end(), rows.begin(), rows.end());
  }
  std::printf("%-40s %-5s %6s %-6s %10s %10s %8s %10s  %s\n", "kernel", "prec", "size", "status", "ms", "GFLOP/s",
              "x cuBLAS", "err/bound", "note");
  for (const Row& r : all)
    std::printf("%-40s %-5s %6d %-6s %10.4f %10.1f %8.3f %10.3g  %s\n", r.name.c_str(), r.precision.c_str(), r.size,
                r.status.c_str(), r.ms, r.gflops, r.ratio, r.err, r.note.c_str());
  if (!args.json.empty()) {
    try {
      device = cuda_device().description();
    } catch (const std::exception&) {
    }
    write_json(args.json, all, device);
    std::printf("wrote %s\n", args.json.c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  Args args;
  args.self = argv[0];
  bool sized = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw gpurt::Error(gpurt::ErrorCategory::invalid_argument, a + " needs a value");
      return argv[++i];
    };
    if (a == "--json") args.json = value();
    else if (a == "--only") args.only = value();
    else if (a == "--fatbin") args.fatbin = value();
    else if (a == "--child") args.child = value();
    else if (a == "--reps") args.reps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--big") args.sizes.push_back(8192);
    else if (a == "--selftest") return selftest();
    else if (a == "--size") {
      if (!sized) args.sizes.clear(), sized = true;
      args.sizes.push_back(std::atoi(value().c_str()));
    } else {
      std::fprintf(stderr, "usage: %s [--json FILE] [--size N]... [--big] [--reps R] [--only TEXT] [--fatbin PATH]\n", argv[0]);
      return 2;
    }
  }
  for (int s : args.sizes)
    if (s < 8) throw gpurt::Error(gpurt::ErrorCategory::invalid_argument, "--size must be at least 8");
  return args.child.empty() ? parent(args) : run_child(args);
} catch (const std::exception& e) {
  std::fprintf(stderr, "gpurt-tune-tensor: %s\n", e.what());
  return 1;
}
