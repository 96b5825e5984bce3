// 09_multi_gpu: one job split over several devices of one process. C = A * B (row-major fp32,
// gpurt::lib::matmul, so every backend runs it) split by rows of A: A and B are uploaded to the
// first device, each device copies its rows of A and all of B from the first device's buffers
// (Queue::copy between devices: the backend's peer copy where it has one, else relayed through
// pinned host memory), multiplies, and copies its rows of C back into the first device's C.
// The result is checked against the same job on the first device alone (and a few rows against
// the CPU), and the wall time of both is printed (strong scaling: the same job, more devices), from
// the inputs being on the first device to the product being complete there.
//
//   09_multi_gpu [-d SELECTOR[,SELECTOR...]] [-n SIZE]
//   -d: the devices, as gpurt::device selectors ("cuda:0,cuda:1", "opencl:0,mock:0"); a device
//       named twice gets two shares. Default: every GPU, else the default device.
//   -n: m = n = k (default 512).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <gpurt/gpurt.hpp>
#include <gpurt/library.hpp>

namespace {

std::vector<gpurt::Device> pick(const std::string& list) {
  std::vector<gpurt::Device> out;
  if (!list.empty()) {
    std::size_t at = 0;
    while (at <= list.size()) {
      const std::size_t comma = std::min(list.find(',', at), list.size());
      if (comma > at) out.push_back(gpurt::device(list.substr(at, comma - at)));  // throws, naming the devices
      at = comma + 1;
    }
    return out;
  }
  for (const gpurt::Device& d : gpurt::devices())
    if (d.properties().type == gpurt::DeviceType::gpu) out.push_back(d);
  if (out.empty()) out.push_back(gpurt::default_device());
  return out;
}

// C = A * B over `devs` (the first device holds A, B and C), rows split evenly; returns C and, in
// `seconds`, the wall time from A and B being on the first device to C being complete there: the
// copies between devices, the multiplies and the copies back (the host uploads and the read-back,
// the same whatever the number of devices, are not in it).
std::vector<float> run(const std::vector<gpurt::Device>& devs, const std::vector<float>& a,
                       const std::vector<float>& b, std::size_t n, double& seconds) {
  std::vector<gpurt::Queue> qs;
  for (const gpurt::Device& d : devs) qs.push_back(d.create_queue());
  gpurt::Queue& q0 = qs[0];
  auto da = devs[0].alloc<float>(n * n), db = devs[0].alloc<float>(n * n), dc = devs[0].alloc<float>(n * n);
  struct Share {
    std::size_t row0, rows;
    gpurt::Buffer<float> a, b, c;
  };
  std::vector<Share> shares;
  for (std::size_t i = 0; i < devs.size(); ++i) {
    const std::size_t row0 = n * i / devs.size(), rows = n * (i + 1) / devs.size() - row0;
    shares.push_back({row0, rows, devs[i].alloc<float>(rows * n), devs[i].alloc<float>(n * n),
                      devs[i].alloc<float>(rows * n)});
  }
  q0.copy(a, da);
  q0.copy(b, db);
  q0.finish();
  const auto t0 = std::chrono::steady_clock::now();
  const gpurt::Event inputs = q0.record();
  // Phase 1: each device fetches its inputs and starts its multiply (asynchronous), so that the
  // devices already started compute while later ones fetch.
  for (std::size_t i = 0; i < devs.size(); ++i) {
    Share& s = shares[i];
    qs[i].wait(inputs);  // the uploads to the first device land before the copies read them
    qs[i].copy(da.view(s.row0 * n, s.rows * n), s.a);
    qs[i].copy(db, s.b);
    if (s.rows != 0) gpurt::lib::matmul(qs[i], s.a, s.b, s.c, s.rows, n, n);
  }
  // Phase 2: each device's rows of C into the first device's C, ordered before the read on q0.
  for (std::size_t i = 0; i < devs.size(); ++i) {
    qs[i].copy(shares[i].c, dc.view(shares[i].row0 * n, shares[i].rows * n));
    q0.wait(qs[i].record());
  }
  q0.finish();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return q0.read(dc);
}

}  // namespace

int main(int argc, char** argv) try {
  std::string list;
  std::size_t n = 512;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "-d" || arg == "--devices") && i + 1 < argc) list = argv[++i];
    else if (arg.rfind("--devices=", 0) == 0) list = arg.substr(10);
    else if (arg == "-n" && i + 1 < argc) n = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: %s [-d SELECTOR[,SELECTOR...]] [-n SIZE]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<gpurt::Device> devs = pick(list);
  std::mt19937 rng(19);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> a(n * n), b(n * n);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);

  // Warm-up (program builds, relay buffers), then the timed runs.
  double t1 = 0, tn = 0;
  (void)run({devs[0]}, a, b, n, t1);
  if (devs.size() > 1) (void)run(devs, a, b, n, tn);
  const std::vector<float> one = run({devs[0]}, a, b, n, t1);
  const std::vector<float> all = run(devs, a, b, n, tn);

  // Split vs one device: the same kernel on every row, so equal up to the devices' rounding
  // (different devices may contract differently): within k * 2^-20 of the row sums of |a*b| <= k.
  std::size_t wrong = 0;
  const double tol = double(n) * double(n) * std::ldexp(1.0, -20) + 1e-6;
  for (std::size_t i = 0; i < n * n; ++i) wrong += !(std::fabs(double(all[i]) - double(one[i])) <= tol);
  // A few rows against the CPU too (fp64).
  for (std::size_t r : {std::size_t(0), n / 3, n / 2, n == 0 ? 0 : n - 1}) {
    if (r >= n) continue;
    for (std::size_t j = 0; j < n; ++j) {
      double want = 0, mag = 0;
      for (std::size_t k = 0; k < n; ++k) {
        want += double(a[r * n + k]) * double(b[k * n + j]);
        mag += std::fabs(double(a[r * n + k]) * double(b[k * n + j]));
      }
      wrong += !(std::fabs(double(all[r * n + j]) - want) <= mag * 1e-5 + 1e-6);
    }
  }
  for (std::size_t i = 0; i < devs.size(); ++i)
    std::printf("device %zu: %s (rows %zu..%zu)\n", i, devs[i].description().c_str(), n * i / devs.size(),
                n * (i + 1) / devs.size());
  std::printf("matmul %zux%zu (inputs on the first device to the product there): 1 device %.3f s, %zu device(s) "
              "%.3f s, speedup %.2fx\n",
              n, n, t1, devs.size(), tn, tn > 0 ? t1 / tn : 0.0);
  std::printf("%s: %zu wrong\n", wrong ? "FAILED" : "OK", wrong);
  return wrong ? 1 : 0;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
