// Graphs on the OpenCL plugin (backends/opencl/cl_graph.cpp): each recorded launch is a kernel
// object of the graph's own with its arguments set ahead, OpenCL C views are sub-buffers the graph
// holds, and a replay only enqueues. These cases try to break what that mapping could get wrong:
// views, updates while earlier replays are pending, the application's kernel used at the same time,
// pinned copies, and the kernel objects' lifetime. The conformance suite (tests/graphs)
// covers the public contract on every device. Runs on the device "opencl" (PoCL here).
//
// The executable exports clCreateKernel and clReleaseKernel (ENABLE_EXPORTS), which the plugin's
// calls then reach first: they log the kernel objects made and released while a case watches
// (KernelLog), and pass every call on to the ICD loader.
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "gpurt/graph.hpp"
#include "gpurt/opencl.hpp"
#include "harness.hpp"
#include "settled_count.hpp"

using namespace gpurt;

namespace {

const char* cl_source = R"(
__kernel void axpy(__global int* y, __global const int* x, int a, uint n) {
  const uint i = get_global_id(0);
  if (i < n) y[i] += a * x[i];
}
__kernel void iota(__global int* out, int first, uint n) {
  const uint i = get_global_id(0);
  if (i < n) out[i] = first + (int)i;
}
)";

const char* portable_source = R"(
GPURT_KERNEL void affine(GPURT_GLOBAL int32_t* out, GPURT_GLOBAL const int32_t* in, int32_t a, int32_t b, uint32_t n) {
  const uint32_t i = gpurt_global_id(0);
  if (i < n) out[i] = a * in[i] + b;
}
)";

Program opencl_c_program(const Device& dev) { return dev.build({SourceLanguage::opencl_c, cl_source, "graph.cl"}); }
Program portable_program(const Device& dev) {
  return dev.build({SourceLanguage::portable, portable_source, "graph.gpurt"});
}

// Elements per view_alignment (the start an OpenCL C kernel's view must have), at least 1.
std::size_t aligned_elements(const Device& dev) {
  return std::max<std::size_t>(dev.properties().view_alignment / sizeof(std::int32_t), 1);
}

std::size_t mismatches(const std::vector<std::int32_t>& got, const std::vector<std::int32_t>& want) {
  if (got.size() != want.size()) return std::max(got.size(), want.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i) wrong += got[i] != want[i];
  return wrong;
}

cl_uint mem_refs(cl_mem m) {
  cl_uint r = 0;
  REQUIRE(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof r, &r, nullptr) == CL_SUCCESS);
  return r;
}

// mem_refs once it settles at `want` (settled_count.hpp).
cl_uint settled_refs(cl_mem m, cl_uint want) {
  return test::settled_count([m] { return mem_refs(m); }, want);
}

// Whether a sub-buffer holds a reference to its parent on this driver (PoCL's does): then the
// parent's reference count shows how many sub-buffers of it are alive.
bool sub_buffers_count(const Device& dev) {
  cl_int err = CL_SUCCESS;
  cl_mem parent = clCreateBuffer(opencl::context(dev), CL_MEM_READ_WRITE, 4096, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  const cl_uint before = mem_refs(parent);
  cl_buffer_region region{0, 1024};
  cl_mem sub = clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
  REQUIRE(err == CL_SUCCESS);
  const bool counts = mem_refs(parent) == before + 1;
  clReleaseMemObject(sub);
  clReleaseMemObject(parent);
  return counts;
}

cl_uint program_refs(cl_program p) {
  cl_uint r = 0;
  REQUIRE(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof r, &r, nullptr) == CL_SUCCESS);
  return r;
}

// The kernel objects made and released through the OpenCL API while `on`, in call order.
struct KernelLog {
  std::atomic<bool> on{false};
  std::mutex mutex;
  std::vector<cl_kernel> made, released;
};
KernelLog& kernel_log() {
  static KernelLog* log = new KernelLog;  // the plugin may release kernels at exit
  return *log;
}

template <class Fn>
Fn next_entry(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) std::abort();  // the ICD loader is linked in: cannot happen
  return reinterpret_cast<Fn>(f);
}

}  // namespace

extern "C" CL_API_ENTRY cl_kernel CL_API_CALL clCreateKernel(cl_program program, const char* name, cl_int* err) {
  using Fn = cl_kernel(CL_API_CALL*)(cl_program, const char*, cl_int*);
  static const Fn next = next_entry<Fn>("clCreateKernel");
  cl_kernel k = next(program, name, err);
  KernelLog& log = kernel_log();
  if (k && log.on) {
    std::lock_guard<std::mutex> lock(log.mutex);
    log.made.push_back(k);
  }
  return k;
}

extern "C" CL_API_ENTRY cl_int CL_API_CALL clReleaseKernel(cl_kernel kernel) {
  using Fn = cl_int(CL_API_CALL*)(cl_kernel);
  static const Fn next = next_entry<Fn>("clReleaseKernel");
  KernelLog& log = kernel_log();
  if (log.on) {
    std::lock_guard<std::mutex> lock(log.mutex);
    log.released.push_back(kernel);
  }
  return next(kernel);
}

TEST_CASE("graph.hpp: replays of an OpenCL C kernel on views at the device's view alignment") {
  // graph.hpp: "on OpenCL each launch gets its own kernel object with its arguments set ahead, so a
  // replay only enqueues"; kernel-language.md: OpenCL C kernels take views "aligned to
  // properties().view_alignment" (sub-buffers, which the graph must keep alive between replays).
  Device dev = test::device_under_test();
  Queue q = dev.create_queue();
  Kernel axpy = opencl_c_program(dev).kernel("axpy");
  const std::size_t al = aligned_elements(dev);
  for (std::size_t n : {std::size_t(1), std::size_t(61), std::size_t(1021)}) {
    INFO("n = " << n);
    const std::size_t total = 3 * al + n + 5;
    const auto y0 = test::random_vector<std::int32_t>(total, -1000, 1000);
    const auto x = test::random_vector<std::int32_t>(total, -1000, 1000);
    auto y = dev.alloc<std::int32_t>(total), dx = dev.alloc<std::int32_t>(total);
    q.copy(y0, y);
    q.copy(x, dx);
    Recording rec(dev, "axpy on views");
    rec.launch(axpy, LaunchConfig::cover(Dim3(n), Dim3(64)), y.view(al, n), dx.view(2 * al, n), 3,
               static_cast<std::uint32_t>(n));
    Graph g = rec.finish();
    const int replays = 4;
    for (int r = 0; r < replays; ++r) q.replay(g);
    std::vector<std::int32_t> want = y0;
    for (int r = 0; r < replays; ++r)
      for (std::size_t i = 0; i < n; ++i) want[al + i] += 3 * x[2 * al + i];
    CHECK(mismatches(q.read(y), want) == 0);  // and nothing outside the view changed
  }
}

TEST_CASE("graph.hpp: set_arg between replays - replays enqueued before keep the old arguments") {
  // graph.hpp: set_arg replaces an argument "for the replays enqueued after this call (replays
  // already enqueued keep the old value)". The first replay is held behind an event of a queue
  // still busy with other work, so it is pending while the buffer and scalar are swapped.
  Device dev = test::device_under_test();
  Queue q = dev.create_queue(), busy = dev.create_queue();
  Kernel affine = portable_program(dev).kernel("affine");
  Kernel iota = opencl_c_program(dev).kernel("iota");
  const std::size_t n = 4099;
  const auto in = test::random_vector<std::int32_t>(n + 7, -1000, 1000);
  auto din = dev.alloc<std::int32_t>(n + 7);
  q.copy(in, din);
  auto a = dev.alloc<std::int32_t>(n + 3), b = dev.alloc<std::int32_t>(n + 5);
  q.fill(a, -1);
  q.fill(b, -1);
  auto slow = dev.alloc<std::int32_t>(1 << 22);
  auto empty = dev.alloc<std::int32_t>(0);

  Recording rec(dev, "affine");
  rec.fill(empty, 0);  // command 0: nothing to do, keeps the numbering
  const Step step = rec.launch(affine, LaunchConfig::cover(Dim3(n), Dim3(128)), a.view(3, n), din.view(1, n), 2, 5,
                               static_cast<std::uint32_t>(n));
  CHECK(step.index == 1);
  Graph g = rec.finish();

  for (int k = 0; k < 8; ++k)
    busy.launch(iota, LaunchConfig::cover(Dim3(slow.size()), Dim3(64)), slow, k, static_cast<std::uint32_t>(slow.size()));
  q.wait(busy.record());
  q.replay(g);                       // a[3..] = 2 * in[1..] + 5, once busy is done
  g.set_arg(step, 0, b.view(5, n));  // portable kernels take any element offset
  g.set_arg(step, 2, -7);
  q.replay(g);  // b[5..] = -7 * in[1..] + 5
  g.set_args(step, a.view(0, n), din.view(7, n), 1, 0, static_cast<std::uint32_t>(n));
  q.replay(g);  // a[0..n) = in[7..]: overlaps the first replay's output, so order matters too

  std::vector<std::int32_t> want_a(n + 3, -1), want_b(n + 5, -1);
  for (std::size_t i = 0; i < n; ++i) want_a[3 + i] = 2 * in[1 + i] + 5;
  for (std::size_t i = 0; i < n; ++i) want_a[i] = in[7 + i];
  for (std::size_t i = 0; i < n; ++i) want_b[5 + i] = -7 * in[1 + i] + 5;
  CHECK(mismatches(q.read(a), want_a) == 0);
  CHECK(mismatches(q.read(b), want_b) == 0);

  // A bad update is refused and leaves the arguments as they were: the next replay runs with them.
  GPURT_REQUIRE_ERROR(g.set_arg(step, 9, 1), ErrorCategory::invalid_argument, "argument 9");
  q.fill(a, -1);
  q.replay(g);
  std::vector<std::int32_t> again(n + 3, -1);
  for (std::size_t i = 0; i < n; ++i) again[i] = in[7 + i];
  CHECK(mismatches(q.read(a), again) == 0);
}

TEST_CASE("graph.hpp: the application's kernel launched with other arguments between replays") {
  // graph.hpp: "on OpenCL each launch gets its own kernel object with its arguments set ahead": a
  // plain launch of the same Kernel with other arguments must not change what a replay runs with,
  // and a replay must not change what the next plain launch runs with.
  Device dev = test::device_under_test();
  Queue q = dev.create_queue();
  Kernel iota = opencl_c_program(dev).kernel("iota");
  const std::size_t n = 257;
  auto graph_out = dev.alloc<std::int32_t>(n), user_out = dev.alloc<std::int32_t>(n);
  Recording rec(dev, "iota");
  rec.launch(iota, LaunchConfig::cover(Dim3(n), Dim3(32)), graph_out, 7, static_cast<std::uint32_t>(n));
  Graph g = rec.finish();
  std::vector<std::int32_t> seven(n), want(n);
  for (std::size_t i = 0; i < n; ++i) seven[i] = 7 + static_cast<std::int32_t>(i);
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    const std::int32_t first = 100 * (round + 1);
    q.fill(graph_out, -1);
    q.fill(user_out, -1);
    q.launch(iota, LaunchConfig::cover(Dim3(n), Dim3(32)), user_out, first, static_cast<std::uint32_t>(n));
    q.replay(g);
    CHECK(mismatches(q.read(graph_out), seven) == 0);
    for (std::size_t i = 0; i < n; ++i) want[i] = first + static_cast<std::int32_t>(i);
    CHECK(mismatches(q.read(user_out), want) == 0);
  }
}

TEST_CASE("graph.hpp: replays and plain launches of one kernel from two threads do not mix arguments") {
  // graph.hpp: "a Graph may be replayed and updated from several threads"; the graph's kernel
  // objects are its own, so a replay needs neither the application's kernel nor its lock.
  Device dev = test::device_under_test();
  Kernel iota = opencl_c_program(dev).kernel("iota");
  const std::size_t n = 1021;
  auto graph_out = dev.alloc<std::int32_t>(n);
  Recording rec(dev, "iota");
  rec.launch(iota, LaunchConfig::cover(Dim3(n), Dim3(64)), graph_out, -50, static_cast<std::uint32_t>(n));
  Graph g = rec.finish();
  const int rounds = 200;
  std::vector<Buffer<std::int32_t>> user_out;
  for (int t = 0; t < 2; ++t) user_out.push_back(dev.alloc<std::int32_t>(n));
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    Queue q = dev.create_queue();
    for (int r = 0; r < rounds; ++r) q.replay(g);
    q.finish();
  });
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      Queue q = dev.create_queue();
      for (int r = 0; r < rounds; ++r)
        q.launch(iota, LaunchConfig::cover(Dim3(n), Dim3(64)), user_out[t], 1000 * (t + 1),
                 static_cast<std::uint32_t>(n));
      q.finish();
    });
  for (auto& th : threads) th.join();
  Queue q = dev.create_queue();
  std::vector<std::int32_t> want(n);
  for (std::size_t i = 0; i < n; ++i) want[i] = -50 + static_cast<std::int32_t>(i);
  CHECK(mismatches(q.read(graph_out), want) == 0);
  for (int t = 0; t < 2; ++t) {
    for (std::size_t i = 0; i < n; ++i) want[i] = 1000 * (t + 1) + static_cast<std::int32_t>(i);
    CHECK(mismatches(q.read(user_out[t]), want) == 0);
  }
}

TEST_CASE("graph.hpp: pinned copies, a fill, a launch and a wait replayed in order on any queue") {
  // graph.hpp: "Host memory is read or written by a replay when the replay runs"; replay "may be
  // called on any queue of the graph's device"; wait(event): "each replay's later commands wait
  // for `event`".
  Device dev = test::device_under_test();
  Queue q = dev.create_queue(), other = dev.create_queue(), producer = dev.create_queue();
  Kernel affine = portable_program(dev).kernel("affine");
  Kernel iota = opencl_c_program(dev).kernel("iota");
  for (std::size_t n : {std::size_t(1), std::size_t(31), std::size_t(4099)}) {
    INFO("n = " << n);
    auto hin = dev.alloc_host<std::int32_t>(n), hout = dev.alloc_host<std::int32_t>(n + 2);
    auto d = dev.alloc<std::int32_t>(n), offs = dev.alloc<std::int32_t>(n), out = dev.alloc<std::int32_t>(n + 2);
    producer.launch(iota, LaunchConfig::cover(Dim3(n), Dim3(64)), offs, 11, static_cast<std::uint32_t>(n));
    const Event produced = producer.record();
    Recording rec(dev, "pipeline");
    rec.copy(hin, d);
    rec.fill(out, 9);
    rec.wait(produced);
    rec.launch(affine, LaunchConfig::cover(Dim3(n), Dim3(64)), out.view(1, n), d, 3, 0, static_cast<std::uint32_t>(n));
    rec.launch(affine, LaunchConfig::cover(Dim3(n), Dim3(64)), d, offs, 1, 0, static_cast<std::uint32_t>(n));
    rec.copy(out, hout);
    Graph g = rec.finish();
    for (Queue* on : {&q, &other}) {
      const auto x = test::random_vector<std::int32_t>(n, -1000, 1000);
      std::copy(x.begin(), x.end(), hin.begin());
      std::fill(hout.begin(), hout.end(), -1);
      on->replay(g);
      on->finish();
      std::vector<std::int32_t> got(hout.begin(), hout.end()), want(n + 2, 9);
      for (std::size_t i = 0; i < n; ++i) want[1 + i] = 3 * x[i];
      CHECK(mismatches(got, want) == 0);
      std::vector<std::int32_t> ids(n);
      for (std::size_t i = 0; i < n; ++i) ids[i] = 11 + static_cast<std::int32_t>(i);
      CHECK(mismatches(on->read(d), ids) == 0);  // the second launch ran after the wait
    }
  }
}

TEST_CASE("graph.hpp: a graph's kernel objects are released with it") {
  // graph.hpp: "on OpenCL each launch gets its own kernel object" - made once, when the graph is
  // made, and released with the graph: recording more launches must not leak kernel objects, and
  // replays and updates make none. A cl_kernel holds a reference to its cl_program, so the
  // program's reference count shows the graph's kernels.
  Device dev = test::device_under_test();
  Queue q = dev.create_queue();
  Program p = opencl_c_program(dev);
  Kernel iota = p.kernel("iota");
  const cl_program native = opencl::program(p);
  const cl_uint before = program_refs(native);
  auto out = dev.alloc<std::int32_t>(64);
  {
    Recording rec(dev, "three launches");
    Step s{};
    for (int i = 0; i < 3; ++i) s = rec.launch(iota, LaunchConfig(Dim3(1), Dim3(64)), out, i, 64u);
    CHECK(program_refs(native) == before);  // nothing is made while recording
    Graph g = rec.finish();
    const cl_uint made = program_refs(native);
    CHECK(made == before + 3);  // one kernel object per launch
    for (int r = 0; r < 5; ++r) q.replay(g);
    g.set_arg(s, 1, 40);  // one more kernel object, kept for later updates
    const cl_uint updated = program_refs(native);
    CHECK(updated == made + 1);
    for (int r = 0; r < 5; ++r) {
      g.set_arg(s, 1, 41 + r);
      q.replay(g);
    }
    q.finish();
    CHECK(program_refs(native) == updated);
    std::vector<std::int32_t> want(64);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = 45 + static_cast<std::int32_t>(i);
    CHECK(mismatches(q.read(out), want) == 0);
  }
  q.finish();
  CHECK(program_refs(native) == before);
}

TEST_CASE("graph.hpp: a graph's kernel objects are released newest first (linear on PoCL)") {
  // graph.hpp: "Releasing a graph costs one release per native object it made, and grows linearly
  // with its commands". PoCL keeps a program's kernel objects in a list it prepends to and searches
  // on each clReleaseKernel: released oldest first, dropping a graph of 100,000 launches took
  // 22-160 s (quadratic). The graph must release its kernel objects in the reverse of the order it
  // made them - spares made by later set_arg calls (in any order of steps) included - and each
  // exactly once. Structural, so it holds on every driver and needs no clock.
  Device dev = test::device_under_test();
  Queue q = dev.create_queue();
  Program p = opencl_c_program(dev);
  Kernel iota = p.kernel("iota");
  auto out = dev.alloc<std::int32_t>(64);
  KernelLog& log = kernel_log();
  {
    std::lock_guard<std::mutex> lock(log.mutex);
    log.made.clear();
    log.released.clear();
  }
  log.on = true;
  {
    Recording rec(dev, "many launches");
    std::vector<Step> steps;
    const int launches = 300;
    for (int i = 0; i < launches; ++i) steps.push_back(rec.launch(iota, LaunchConfig(Dim3(1), Dim3(64)), out, i, 64u));
    Graph g = rec.finish();
    for (int i : {7, 250, 3, 120, 299, 0}) g.set_arg(steps[static_cast<std::size_t>(i)], 1, 1000 + i);
    q.replay(g);
    q.finish();
    std::lock_guard<std::mutex> lock(log.mutex);
    CHECK(log.made.size() == static_cast<std::size_t>(launches) + 6);
    CHECK(log.released.empty());
  }
  log.on = false;
  std::lock_guard<std::mutex> lock(log.mutex);
  const std::vector<cl_kernel> want(log.made.rbegin(), log.made.rend());
  const auto diverge = std::mismatch(want.begin(), want.end(), log.released.begin(), log.released.end());
  INFO("the first release out of order is number " << (diverge.first - want.begin()) << " of " << want.size());
  CHECK(log.released.size() == want.size());
  CHECK(diverge.first == want.end());
}

TEST_CASE("graph.hpp: a graph keeps its sub-buffers when the buffer's view cache moves on") {
  // architecture.md: OpenCL C kernels take "a sub-buffer (at most 64 cached per buffer)"; graph.hpp:
  // "Every buffer ... a recording or graph names is kept alive by it". Plain launches with 70 other
  // views push the graph's sub-buffers out of the buffer's cache; the graph must still hold them.
  Device dev = test::device_under_test();
  Queue q = dev.create_queue();
  Kernel axpy = opencl_c_program(dev).kernel("axpy");
  const std::size_t al = aligned_elements(dev), n = 127, views = 70;
  const std::size_t total = (views + 4) * al + n;
  const auto y0 = test::random_vector<std::int32_t>(total, -1000, 1000);
  const auto x = test::random_vector<std::int32_t>(total, -1000, 1000);
  auto y = dev.alloc<std::int32_t>(total), dx = dev.alloc<std::int32_t>(total);
  q.copy(y0, y);
  q.copy(x, dx);
  q.finish();
  const bool counts = sub_buffers_count(dev);
  const cl_uint base = mem_refs(opencl::memory(y));
  Recording rec(dev, "axpy");
  const Step s = rec.launch(axpy, LaunchConfig::cover(Dim3(n), Dim3(32)), y.view(al, n), dx.view(al, n), 2,
                            static_cast<std::uint32_t>(n));
  Graph g = rec.finish();
  std::vector<std::int32_t> want = y0;
  for (std::size_t v = 0; v < views; ++v) {  // x += 0 * ...: the data stays, the cache turns over
    q.launch(axpy, LaunchConfig::cover(Dim3(n), Dim3(32)), dx.view((v + 2) * al, n), y.view((v + 3) * al, n), 0,
             static_cast<std::uint32_t>(n));
  }
  q.finish();
  q.replay(g);
  for (std::size_t i = 0; i < n; ++i) want[al + i] += 2 * x[al + i];
  CHECK(mismatches(q.read(y), want) == 0);
  // Where sub-buffers hold their parent, y's reference count shows its sub-buffers: the 64 the
  // cache keeps and the graph's own.
  if (counts) CHECK(settled_refs(opencl::memory(y), base + 64 + 1) == base + 64 + 1);
  // An update's new sub-buffers are held the same way.
  g.set_arg(s, 0, y.view(2 * al, n));
  for (std::size_t v = 0; v < views; ++v)
    q.launch(axpy, LaunchConfig::cover(Dim3(n), Dim3(32)), dx.view((v + 3) * al, n), y.view((v + 1) * al, n), 0,
             static_cast<std::uint32_t>(n));
  q.finish();
  q.replay(g);
  for (std::size_t i = 0; i < n; ++i) want[2 * al + i] += 2 * x[al + i];
  CHECK(mismatches(q.read(y), want) == 0);
  // The updated graph's one sub-buffer of `y`: one reference more while the graph lives than after
  // it has gone (the cache holds as many both times).
  if (!counts) return;  // this driver's counts say nothing of sub-buffers
  q.finish();
  const cl_uint with_graph = settled_refs(opencl::memory(y), base + 64 + 1);
  g = Graph();
  q.finish();  // what the graph handed to the queue goes at its next finish
  CHECK(settled_refs(opencl::memory(y), with_graph - 1) + 1 == with_graph);
}
