// 10_mpi: a 1-D heat equation over a domain split across MPI ranks, one gpurt device per rank.
//   mpirun -np 2 10_mpi [-d SELECTOR] [-n POINTS] [-s STEPS] [--staged]
// Each rank takes the devices SELECTOR names (-d/--device, else GPURT_DEVICE, else the default
// device's backend) and uses the one at its node-local rank modulo their count. Every step it
// exchanges one halo cell with each neighbour through MPI, runs the stencil kernel (portable
// dialect) and allreduces the squared change (the residual). The halo goes through pinned host
// memory (gpurt::HostBuffer) - or, where the MPI library says at run time that it is CUDA-aware and
// the device is a CUDA one, as device pointers straight to MPI. Rank 0 gathers the result and
// checks it and every step's residual against a serial CPU run; any mismatch exits non-zero.
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include <gpurt/gpurt.hpp>

#if defined(GPURT_EXAMPLE_CUDA)
#include <dlfcn.h>

#include <gpurt/cuda.hpp>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI's extensions: MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#endif

// u and v hold n + 2 cells: a ghost cell on each side of the rank's n points.
static const char* source = R"(
GPURT_KERNEL void heat_step(GPURT_GLOBAL const float* u, GPURT_GLOBAL float* v, uint32_t n, float alpha,
                            GPURT_GLOBAL float* partial, GPURT_DYNAMIC_LOCAL(float, scratch)) {
  const size_t lid = gpurt_local_id(0), i = gpurt_global_id(0);
  float change = 0.0f;
  if (i < n) {
    const float c = u[i + 1];
    const float next = c + alpha * (u[i] - 2.0f * c + u[i + 2]);
    v[i + 1] = next;
    change = (next - c) * (next - c);
  }
  scratch[lid] = change;
  gpurt_local_barrier();
  for (size_t s = gpurt_local_size(0) / 2; s > 0; s /= 2) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    gpurt_local_barrier();
  }
  if (lid == 0) partial[gpurt_group_id(0)] = scratch[0];
})";

constexpr float alpha = 0.25f, left_edge = 1.0f, right_edge = 0.0f;

// The initial value at global point i (-1 and `points` are the fixed edges): rough on purpose, so
// that a missed or misplaced halo changes the result far beyond rounding.
static float initial(long long i, long long points) {
  if (i < 0) return left_edge;
  if (i >= points) return right_edge;
  return static_cast<float>((static_cast<unsigned long long>(i) * 2654435761ull) % 1000u) / 1000.0f;
}

// The same computation on one CPU: the final field and every step's residual.
static std::vector<float> serial(long long points, int steps, std::vector<double>& residuals) {
  std::vector<float> u(points + 2), v;
  for (long long i = -1; i <= points; ++i) u[i + 1] = initial(i, points);
  v = u;
  for (int s = 0; s < steps; ++s) {
    double r = 0;
    for (long long i = 0; i < points; ++i) {
      const float c = u[i + 1], next = c + alpha * (u[i] - 2.0f * c + u[i + 2]);
      v[i + 1] = next;
      r += static_cast<double>((next - c) * (next - c));
    }
    residuals.push_back(r);
    std::swap(u, v);
  }
  return std::vector<float>(u.begin() + 1, u.end() - 1);
}

// CUDA-aware MPI takes device pointers. Asked at run time, never assumed: MPIX_Query_cuda_support()
// where the MPI library has the extension (Open MPI's <mpi-ext.h>), false everywhere else.
static bool mpi_is_cuda_aware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

struct Options {
  std::string selector;  // empty: GPURT_DEVICE, else the default device's backend
  long long points = 100003;
  int steps = 200;
  bool staged = false;  // staged even where CUDA-aware MPI could take device pointers
};

static bool parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if ((a == "-d" || a == "--device") && has_value) o.selector = argv[++i];
    else if (a.rfind("--device=", 0) == 0) o.selector = a.substr(9);
    else if (a == "-n" && has_value) o.points = std::atoll(argv[++i]);
    else if (a == "-s" && has_value) o.steps = std::atoi(argv[++i]);
    else if (a == "--staged") o.staged = true;
    else return false;
  }
  return o.points > 0 && o.steps >= 0;
}

// The devices the selector names, in gpurt's order, and the one for this node-local rank.
static gpurt::Device pick_device(std::string selector, int local_rank, int& listed) {
  if (selector.empty()) {
    const char* env = std::getenv("GPURT_DEVICE");
    selector = env && *env ? env : gpurt::default_device().backend();
  }
  std::vector<gpurt::Device> list;
  for (const gpurt::Device& d : gpurt::devices())
    if (gpurt::selector_matches(selector, d.properties())) list.push_back(d);
  listed = static_cast<int>(list.size());
  if (list.empty()) return gpurt::device(selector);  // throws, listing the devices that exist
  return list[static_cast<std::size_t>(local_rank) % list.size()];
}

static int run(const Options& o, int rank, int ranks) {
  MPI_Comm node;  // the ranks sharing this node (memory): its rank numbers ranks per node
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local_rank = 0, listed = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_free(&node);
  const gpurt::Device dev = pick_device(o.selector, local_rank, listed);

  // This rank's points: [first, first + n) of the global domain.
  const long long base = o.points / ranks, extra = o.points % ranks;
  const long long n = base + (rank < extra ? 1 : 0), first = rank * base + std::min<long long>(rank, extra);
  const int left = rank > 0 ? rank - 1 : MPI_PROC_NULL, right = rank + 1 < ranks ? rank + 1 : MPI_PROC_NULL;

  const bool direct = !o.staged && dev.backend() == "cuda" && mpi_is_cuda_aware();
  char line[256];
  std::snprintf(line, sizeof line, "rank %d (node-local %d): %s (%d listed), points [%lld, %lld), halo %s", rank,
                local_rank, dev.description().c_str(), listed, first, first + n,
                direct ? "device pointers to CUDA-aware MPI" : "staged through gpurt::HostBuffer");
  std::vector<char> lines(rank == 0 ? sizeof line * ranks : 1);
  MPI_Gather(line, sizeof line, MPI_CHAR, lines.data(), sizeof line, MPI_CHAR, 0, MPI_COMM_WORLD);
  for (int r = 0; rank == 0 && r < ranks; ++r) std::printf("%s\n", &lines[sizeof line * r]);

  const std::size_t group = 128;
  gpurt::Kernel k = dev.build({gpurt::SourceLanguage::portable, source, "heat_step.gpurt"}).kernel("heat_step");
  gpurt::Queue q = dev.create_queue();
  const auto cfg = gpurt::LaunchConfig::cover(gpurt::Dim3(static_cast<std::size_t>(n)), gpurt::Dim3(group),
                                              group * sizeof(float));
  std::vector<float> init(static_cast<std::size_t>(n) + 2);
  for (long long i = -1; i <= n; ++i) init[i + 1] = initial(first + i, o.points);
  gpurt::Buffer<float> u = dev.alloc<float>(init.size()), v = dev.alloc<float>(init.size());
  gpurt::Buffer<float> partial = dev.alloc<float>(cfg.groups.x);
  gpurt::HostBuffer<float> halo = dev.alloc_host<float>(4), sums = dev.alloc_host<float>(cfg.groups.x);
  q.copy(init, u);
  q.copy(init, v);  // the edge ghost cells never change: both buffers hold them
  const std::size_t last = static_cast<std::size_t>(n);
#if defined(GPURT_EXAMPLE_CUDA)
  if (direct) {
    // MPI's own CUDA calls run in the calling thread's current context: make it this device's.
    using SetCurrent = CUresult (*)(CUcontext);
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);  // loaded by gpurt's CUDA plugin
    auto set_current = driver ? reinterpret_cast<SetCurrent>(dlsym(driver, "cuCtxSetCurrent")) : nullptr;
    if (set_current) set_current(gpurt::cuda::context(dev));
  }
#endif

  std::vector<double> residuals;
  for (int s = 0; s < o.steps; ++s) {
    // Halo: our first point goes left and the right ghost comes from the right; then the mirror.
    if (direct) {
#if defined(GPURT_EXAMPLE_CUDA)
      q.finish();  // MPI reads and writes the memory itself: the queue's work must be done
      auto at = [&](std::size_t i) { return gpurt::cuda::pointer_as(u.view(i, 1)); };
      MPI_Sendrecv(at(1), 1, MPI_FLOAT, left, 0, at(last + 1), 1, MPI_FLOAT, right, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      MPI_Sendrecv(at(last), 1, MPI_FLOAT, right, 1, at(0), 1, MPI_FLOAT, left, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
#endif
    } else {
      q.copy(u.view(1, 1), halo.view(0, 1));
      q.copy(u.view(last, 1), halo.view(1, 1));
      q.finish();
      MPI_Sendrecv(&halo[0], 1, MPI_FLOAT, left, 0, &halo[3], 1, MPI_FLOAT, right, 0, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      MPI_Sendrecv(&halo[1], 1, MPI_FLOAT, right, 1, &halo[2], 1, MPI_FLOAT, left, 1, MPI_COMM_WORLD,
                   MPI_STATUS_IGNORE);
      if (left != MPI_PROC_NULL) q.copy(halo.view(2, 1), u.view(0, 1));
      if (right != MPI_PROC_NULL) q.copy(halo.view(3, 1), u.view(last + 1, 1));
    }
    q.launch(k, cfg, u, v, static_cast<std::uint32_t>(n), alpha, partial);
    q.copy(partial, sums);
    q.finish();
    double mine = 0, all = 0;
    for (float x : sums) mine += x;
    MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    residuals.push_back(all);
    std::swap(u, v);
  }

  // Rank 0 gathers the field and checks it, and the residuals, against the serial run.
  const std::vector<float> field = q.read(u.view(1, last));
  std::vector<int> counts(ranks), starts(ranks);
  for (int r = 0; r < ranks; ++r) {
    counts[r] = static_cast<int>(base + (r < extra ? 1 : 0));
    starts[r] = static_cast<int>(r * base + std::min<long long>(r, extra));
  }
  std::vector<float> whole(rank == 0 ? static_cast<std::size_t>(o.points) : 0);
  MPI_Gatherv(field.data(), static_cast<int>(n), MPI_FLOAT, whole.data(), counts.data(), starts.data(), MPI_FLOAT,
              0, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == 0) {
    std::vector<double> expect_res;
    const std::vector<float> expect = serial(o.points, o.steps, expect_res);
    double worst = -1;
    long long at = -1;
    for (long long i = 0; i < o.points; ++i) {
      const double d = std::fabs(static_cast<double>(whole[i]) - expect[i]);
      if (!(d <= worst)) worst = d, at = i;  // also catches NaN
    }
    int bad_steps = 0;
    for (int s = 0; s < o.steps; ++s)  // float sums in another order: a relative tolerance
      bad_steps += !(std::fabs(residuals[s] - expect_res[s]) <= 1e-3 * expect_res[s] + 1e-12);
    ok = worst <= 1e-4 && bad_steps == 0;
    std::printf("%d ranks, %lld points, %d steps: residual %.6e (CPU %.6e), %d steps' residuals off, "
                "largest difference %.3g at point %lld\n%s\n",
                ranks, o.points, o.steps, o.steps ? residuals.back() : 0.0, o.steps ? expect_res.back() : 0.0,
                bad_steps, worst, at, ok ? "OK" : "FAILED");
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  Options o;
  if (!parse(argc, argv, o) || o.points < ranks || o.points > 2000000000) {
    if (rank == 0)
      std::fprintf(stderr, "usage: mpirun -np R %s [-d SELECTOR] [-n POINTS >= R] [-s STEPS] [--staged]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  int rc = 0;
  try {
    rc = run(o, rank, ranks);
  } catch (const std::exception& e) {  // gpurt::Error, or std::bad_alloc for the host vectors
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);  // the other ranks may wait in a collective: end them all
  }
  MPI_Finalize();
  return rc;
}
