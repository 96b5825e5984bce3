// nccl_allreduce: ncclAllReduce (sum of floats) over gpurt buffers on every CUDA device of this
// process - one NCCL rank per device (ncclCommInitAll), each on its gpurt queue's stream - checked
// against the CPU. NCCL is found at run time, so nothing of it is needed to build this:
// libnccl.so.2 on the loader's path, else the files or directories in NCCL_LIBRARY (':'-separated),
// else Python's nvidia-nccl-cu* package (nvidia/nccl/lib/libnccl.so.2).
// No CUDA device, or no NCCL: prints "skipped: <reason>" and exits 0.
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gpurt/cuda.hpp>
#include <gpurt/gpurt.hpp>

// The few declarations of nccl.h this needs, with its values (NCCL 2.x, checked against nccl.h of
// NCCL 2.28: ncclSuccess = 0, ncclFloat32 = 7, ncclSum = 0; the enums are int-sized). ncclComm_t is
// opaque. (Several processes would add ncclGetUniqueId and its 128-byte ncclUniqueId, sent to the
// other ranks with MPI_Bcast, and ncclCommInitRank.)
namespace nccl {
using Comm = struct ncclComm*;
enum Result : int { success = 0 };
enum DataType : int { float32 = 7 };
enum RedOp : int { sum = 0 };

struct Library {
  Result (*get_version)(int*) = nullptr;
  Result (*comm_init_all)(Comm*, int, const int*) = nullptr;
  Result (*comm_destroy)(Comm) = nullptr;
  Result (*group_start)() = nullptr;
  Result (*group_end)() = nullptr;
  Result (*all_reduce)(const void*, void*, std::size_t, DataType, RedOp, Comm, CUstream) = nullptr;
  const char* (*error_string)(Result) = nullptr;
  std::string path;

  void check(Result r, const char* call) const {
    if (r != success) throw std::runtime_error(std::string(call) + " failed: " + error_string(r));
  }
};

template <class F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// Where Python's nvidia-nccl package keeps the library (a fixed command: nothing of ours reaches
// the shell). Empty when there is no such package.
std::string python_package_library() {
  FILE* p = popen("python3 -c 'import nvidia.nccl as m; print(list(m.__path__)[0])' 2>/dev/null", "r");
  if (!p) return {};
  char line[4096] = {};
  const bool got = std::fgets(line, sizeof line, p) != nullptr;
  pclose(p);
  std::string dir = got ? line : "";
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
  return dir.empty() ? dir : dir + "/lib/libnccl.so.2";
}

// Loads NCCL from the first place that has it; on failure `why` says what was tried.
bool load(Library& n, std::string& why) {
  std::vector<std::string> tries{"libnccl.so.2"};
  if (const char* env = std::getenv("NCCL_LIBRARY")) {
    std::string list = env;
    for (std::size_t at = 0; at <= list.size();) {
      const std::size_t end = std::min(list.find(':', at), list.size());
      std::string item = list.substr(at, end - at);
      struct stat st {};
      if (!item.empty() && stat(item.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) item += "/libnccl.so.2";
      if (!item.empty()) tries.push_back(item);
      at = end + 1;
    }
  }
  const std::string py = python_package_library();
  if (!py.empty()) tries.push_back(py);
  for (const std::string& t : tries) {
    void* lib = dlopen(t.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      why += "\n  " + t + ": " + (e ? e : "not loadable");
      continue;
    }
    if (bind(lib, "ncclGetVersion", n.get_version) && bind(lib, "ncclCommInitAll", n.comm_init_all) &&
        bind(lib, "ncclCommDestroy", n.comm_destroy) && bind(lib, "ncclGroupStart", n.group_start) &&
        bind(lib, "ncclGroupEnd", n.group_end) && bind(lib, "ncclAllReduce", n.all_reduce) &&
        bind(lib, "ncclGetErrorString", n.error_string)) {
      n.path = t;
      return true;
    }
    why += "\n  " + t + ": lacks an NCCL 2 function";
    dlclose(lib);
  }
  if (py.empty()) why += "\n  (no Python package nvidia.nccl: pip install nvidia-nccl-cu13)";
  return false;
}
}  // namespace nccl

int main() try {
  std::vector<gpurt::Device> devs;
  for (const gpurt::Device& d : gpurt::devices())
    if (d.backend() == "cuda") devs.push_back(d);
  if (devs.empty()) {
    std::string reason;
    try {
      reason = gpurt::backend("cuda").reason;
    } catch (const gpurt::Error& e) {  // no CUDA plugin at all
      reason = e.what();
    }
    std::printf("skipped: no CUDA device (cuda backend: %s)\n",
                reason.empty() ? "available, with no device" : reason.c_str());
    return 0;
  }
  nccl::Library n;
  std::string why;
  if (!nccl::load(n, why)) {
    std::printf("skipped: NCCL not found; tried:%s\n", why.c_str());
    return 0;
  }
  int version = 0;
  n.check(n.get_version(&version), "ncclGetVersion");
  const int nd = static_cast<int>(devs.size());
  std::printf("NCCL %d from %s, %d CUDA device(s), one rank each\n", version, n.path.c_str(), nd);

  // One communicator per device, ranks in gpurt's device order; CUdevice is the device ordinal.
  std::vector<int> ordinals;
  for (const gpurt::Device& d : devs) ordinals.push_back(static_cast<int>(gpurt::cuda::device(d)));
  std::vector<nccl::Comm> comms(devs.size());
  n.check(n.comm_init_all(comms.data(), nd, ordinals.data()), "ncclCommInitAll");

  int failures = 0;
  std::mt19937 rng(20261130u);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (const std::size_t count : {std::size_t{1}, std::size_t{1000003}}) {
    std::vector<std::vector<float>> in(devs.size());
    std::vector<double> expect(count, 0.0);
    std::vector<gpurt::Queue> queues;
    std::vector<gpurt::Buffer<float>> send, recv;
    for (std::size_t r = 0; r < devs.size(); ++r) {
      in[r].resize(count);
      for (std::size_t i = 0; i < count; ++i) expect[i] += in[r][i] = value(rng);
      queues.push_back(devs[r].create_queue());
      // The send side is a view at an odd offset: pointer_as gives the view's first element.
      send.push_back(devs[r].alloc<float>(count + 3).view(3, count));
      recv.push_back(devs[r].alloc<float>(count));
      queues[r].copy(in[r], send[r]);  // in the stream before NCCL's work: no host wait needed
    }
    n.check(n.group_start(), "ncclGroupStart");  // one process, several ranks: one group
    for (std::size_t r = 0; r < devs.size(); ++r)
      n.check(n.all_reduce(gpurt::cuda::pointer_as(send[r]), gpurt::cuda::pointer_as(recv[r]), count,
                           nccl::float32, nccl::sum, comms[r], gpurt::cuda::stream(queues[r])),
              "ncclAllReduce");
    n.check(n.group_end(), "ncclGroupEnd");
    for (std::size_t r = 0; r < devs.size(); ++r) {
      const std::vector<float> got = queues[r].read(recv[r]);  // after the reduction, in stream order
      std::size_t bad = 0;
      for (std::size_t i = 0; i < count; ++i)
        bad += !(std::fabs(got[i] - expect[i]) <= 1e-5 * nd);
      std::printf("  %-36s %zu floats: %zu wrong\n", devs[r].description().c_str(), count, bad);
      failures += bad != 0;
    }
  }
  for (nccl::Comm c : comms) n.comm_destroy(c);
  std::printf("%s\n", failures ? "FAILED" : "OK");
  return failures ? 1 : 0;
} catch (const std::exception& e) {  // gpurt::Error, or an NCCL call that failed
  std::fprintf(stderr, "%s\n", e.what());
  return 2;
}
