// 11_graph: a Jacobi solver for the 1D Poisson problem -u'' = f on (0, 1), u(0) = u(1) = 0, run
// twice: (a) with plain launches, (b) with one solver step recorded once (gpurt::Recording) and
// replayed (Queue::replay). A step is 50 sweeps of two ping-pong launches: 100 small kernels. Both
// runs must give the same u, and agree with the CPU; the times and the cost per kernel are printed.
//
//   usage: 11_graph [SELECTOR] [N] [STEPS]      e.g. 11_graph opencl:0 1021 20
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <gpurt/gpurt.hpp>

// One Jacobi sweep: next[i] = (u[i-1] + u[i+1] + h^2 f[i]) / 2 inside, 0 on the boundary.
static const char* source = R"(
GPURT_KERNEL void jacobi(GPURT_GLOBAL const float* u, GPURT_GLOBAL float* next, GPURT_GLOBAL const float* f,
                         float h2, uint64_t n) {
  const size_t i = gpurt_global_id(0);
  if (i >= n) return;
  next[i] = (i == 0 || i + 1 == n) ? 0.0f : 0.5f * (u[i - 1] + u[i + 1] + h2 * f[i]);
})";

constexpr int sweeps_per_step = 50;  // x 2 launches = 100 kernels per step

using Clock = std::chrono::steady_clock;
static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int main(int argc, char** argv) try {
  const gpurt::Device dev = argc > 1 ? gpurt::device(argv[1]) : gpurt::default_device();
  const std::size_t n = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1021;  // grid points, boundaries included
  const int steps = argc > 3 ? std::atoi(argv[3]) : 20;
  if (n == 0 || steps < 1) {
    std::fprintf(stderr, "usage: 11_graph [SELECTOR] [N >= 1] [STEPS >= 1]\n");
    return 2;
  }
  const float h2 = 1.0f / static_cast<float>((n + 1) * (n + 1));
  const std::uint64_t n64 = n;
  std::printf("device: %s, n = %zu, %d steps of %d kernels\n", dev.description().c_str(), n, steps,
              2 * sweeps_per_step);

  std::vector<float> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = std::sin(3.0f * static_cast<float>(i) / static_cast<float>(n)) + 1.0f;
  const gpurt::Kernel jacobi = dev.build({gpurt::SourceLanguage::portable, source, "jacobi.gpurt"}).kernel("jacobi");
  const gpurt::LaunchConfig cfg = gpurt::LaunchConfig::cover(jacobi, n);
  gpurt::Queue queue = dev.create_queue();
  auto df = dev.alloc<float>(n), u = dev.alloc<float>(n), v = dev.alloc<float>(n);
  queue.copy(f, df);

  // (a) Plain launches: every launch is checked and enqueued on its own.
  auto plain_step = [&] {
    for (int k = 0; k < sweeps_per_step; ++k) {
      queue.launch(jacobi, cfg, u, v, df, h2, n64);
      queue.launch(jacobi, cfg, v, u, df, h2, n64);
    }
  };
  plain_step();  // untimed: the first launches of a kernel pay one-time costs
  queue.fill(u, 0.0f);
  queue.finish();
  auto t0 = Clock::now();
  for (int s = 0; s < steps; ++s) plain_step();
  queue.finish();
  const double plain = seconds_since(t0);
  const std::vector<float> u_plain = queue.read(u);

  // (b) One step recorded once (checked now, exactly as Queue::launch), replayed `steps` times.
  gpurt::Recording rec(dev, "jacobi step");
  for (int k = 0; k < sweeps_per_step; ++k) {
    rec.launch(jacobi, cfg, u, v, df, h2, n64);
    rec.launch(jacobi, cfg, v, u, df, h2, n64);
  }
  const gpurt::Graph step = rec.finish();  // instantiated once
  queue.replay(step);                      // untimed, as above
  queue.fill(u, 0.0f);
  queue.finish();
  t0 = Clock::now();
  for (int s = 0; s < steps; ++s) queue.replay(step);  // no per-command checks
  queue.finish();
  const double replayed = seconds_since(t0);
  const std::vector<float> u_graph = queue.read(u);

  // The CPU, sweep for sweep.
  std::vector<float> cu(n, 0.0f), cv(n);
  for (int s = 0; s < steps * 2 * sweeps_per_step; ++s) {
    for (std::size_t i = 0; i < n; ++i) cv[i] = (i == 0 || i + 1 == n) ? 0.0f : 0.5f * (cu[i - 1] + cu[i + 1] + h2 * f[i]);
    std::swap(cu, cv);
  }
  double scale = 1e-30, plain_vs_graph = 0, graph_vs_cpu = 0;
  for (std::size_t i = 0; i < n; ++i) {
    scale = std::max(scale, static_cast<double>(std::fabs(cu[i])));
    plain_vs_graph = std::max(plain_vs_graph, static_cast<double>(std::fabs(u_plain[i] - u_graph[i])));
    graph_vs_cpu = std::max(graph_vs_cpu, static_cast<double>(std::fabs(u_graph[i] - cu[i])));
  }
  const double kernels = static_cast<double>(steps) * 2 * sweeps_per_step;
  std::printf("plain launches: %8.2f ms, %7.2f us per kernel\n", plain * 1e3, plain * 1e6 / kernels);
  std::printf("graph replays:  %8.2f ms, %7.2f us per kernel (%.2fx)\n", replayed * 1e3, replayed * 1e6 / kernels,
              plain / replayed);
  // Same kernels in the same order: the two runs agree to rounding (a device may contract a*b+c
  // differently from one build to the next, never from one launch path to the other; 1e-5 allows it).
  const bool ok = plain_vs_graph <= 1e-5 * scale && graph_vs_cpu <= 1e-4 * scale;
  std::printf("%s: max |plain - graph| = %.3g, max |graph - CPU| = %.3g (max |u| = %.3g)\n", ok ? "OK" : "FAILED",
              plain_vs_graph, graph_vs_cpu, scale);
  return ok ? 0 : 1;
} catch (const gpurt::Error& e) {
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
