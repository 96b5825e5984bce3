// ClGraph (cl_graph.hpp): recorded commands packed once by ClDevice::create_graph, enqueued by
// ClQueue::replay, launch arguments replaced by ClGraph::set_args.
#include "cl_graph.hpp"

#include <algorithm>
#include <cstring>

namespace gpurt::opencl {

namespace {

using Kind = plugin::Command::Kind;

cl_mem mem_of(plugin::Buffer* b) { return b ? static_cast<ClBuffer*>(b)->handle() : nullptr; }

// A new kernel object of `k`'s program and function, with no arguments set: the graph's own, so
// that neither a replay nor an update touches the application's cl_kernel (clCloneKernel would do,
// but it is OpenCL 2.1 and the plugin targets 1.2). `name` is for messages. `g` owns it.
Status own_kernel(ClGraph& g, cl_kernel k, const std::string& name, cl_kernel& out) {
  cl_program program = nullptr;
  cl_int err = clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof program, &program, nullptr);
  if (err != CL_SUCCESS) return fail(err, "clGetKernelInfo", "reading the program of '" + name + "'");
  std::size_t length = 0;
  err = clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &length);
  std::string function(length, '\0');
  if (err == CL_SUCCESS && length) err = clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, length, &function[0], nullptr);
  if (err != CL_SUCCESS) return fail(err, "clGetKernelInfo", "reading the function name of '" + name + "'");
  while (!function.empty() && function.back() == '\0') function.pop_back();
  cl_kernel made = clCreateKernel(program, function.c_str(), &err);
  if (err != CL_SUCCESS) return fail(err, "clCreateKernel", "making a kernel object of '" + name + "' for the graph");
  out = g.keep(cl::Kernel(made));  // adopts the reference
  return Status::success();
}
Status own_kernel(ClGraph& g, const ClKernel& k, cl_kernel& out) { return own_kernel(g, k.handle(), k.info().name, out); }

// A fill the device runs as a kernel (GPUs, ClDevice::fill_with_kernel) as a kernel object of the
// graph's own with its arguments set; else nothing is made, and replays use clEnqueueFillBuffer.
Status fill_as_kernel(ClDevice& device, ClGraph& g, ClGraph::Step& st) {
  ClDevice::FillPlan plan;
  if (!device.plan_fill(st.dst_offset, st.bytes, st.pattern, st.pattern_size, plan)) return Status::success();
  Status s = own_kernel(g, device.fill_kernel(plan), "gpurt_fill", st.kernel);
  if (!s.ok()) return s;
  const cl_int err = ClDevice::set_fill_args(st.kernel, st.dst, plan);
  if (err != CL_SUCCESS) return fail(err, "clSetKernelArg", "setting the arguments of a fill kernel");
  st.range.dims = 1;
  st.range.global[0] = plan.global;
  st.range.local[0] = plan.group;
  return Status::success();
}

// Packs commands[i] into `st`.
Status pack(ClDevice& device, ClGraph& g, const plugin::Command& c, ClGraph::Step& st) {
  switch (c.kind) {
    case Kind::launch: {
      st.user = static_cast<const ClKernel*>(c.kernel);
      Status s = own_kernel(g, *st.user, st.kernel);
      if (!s.ok()) return s;
      s = set_kernel_args(*st.user, st.kernel, c.args, c.arg_count, st.views).status();
      if (!s.ok()) return s;
      st.range = nd_range(c.shape);
      break;
    }
    case Kind::copy:
    case Kind::copy_from_host:
    case Kind::copy_to_host:
      st.src = mem_of(c.src);
      st.dst = mem_of(c.dst);
      st.src_offset = c.src_offset;
      st.dst_offset = c.dst_offset;
      st.bytes = c.bytes;
      st.host = c.host;
      break;
    case Kind::fill:
      if (c.pattern_size == 0 || c.pattern_size > sizeof st.pattern)
        return Status::failure(ErrorCategory::internal,
                               "a fill pattern of " + std::to_string(c.pattern_size) + " bytes (1 to 128 expected)",
                               "Recording::finish");
      st.dst = mem_of(c.dst);
      st.dst_offset = c.dst_offset;
      st.bytes = c.bytes;
      std::memcpy(st.pattern, c.pattern, c.pattern_size);
      st.pattern_size = c.pattern_size;
      if (st.dst_offset % st.pattern_size != 0) {  // as ClQueue::fill: copies from a seed
        unsigned char block[fill_block_bytes] = {};
        const std::size_t first = repeat_pattern(block, st.bytes, st.pattern, st.pattern_size);
        cl_int err = CL_SUCCESS;
        st.seed = cl::Buffer(device.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, first, block, &err);
        if (err != CL_SUCCESS) return fail(err, "clCreateBuffer", "the pattern of an unaligned fill");
        return Status::success();
      }
      return fill_as_kernel(device, g, st);
    case Kind::wait:
      st.event = cl::Event(static_cast<const ClEvent*>(c.event)->handle(), true);  // retains it
      break;
    case Kind::nothing:
      break;
  }
  return Status::success();
}

Status named(Status s, const ClGraph::Step& st) {
  s.message = ClGraph::describe(st) + ": " + s.message;
  return s;
}

}  // namespace

// Newest first (cl_graph.hpp, Release): linear on PoCL, whose clReleaseKernel searches the
// program's kernel list from its newest entry.
ClGraph::~ClGraph() {
  while (!kernels_.empty()) kernels_.pop_back();
}

void ClGraph::note_shared(const plugin::Buffer* buffer) {
  if (!buffer) return;
  const auto& region = static_cast<const ClBuffer*>(buffer)->coarse();
  if (region && std::find(shared_.begin(), shared_.end(), region) == shared_.end()) shared_.push_back(region);
}

void ClGraph::note_shared(const plugin::KernelArg* args, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i)
    if (args[i].kind == plugin::KernelArg::Kind::buffer) note_shared(args[i].buffer);
}

cl_kernel ClGraph::keep(cl::Kernel k) {
  kernels_.push_back(std::move(k));
  return kernels_.back()();
}

std::string ClGraph::describe(const Step& st) {
  std::string what;
  switch (st.kind) {
    case Kind::launch: what = "launch '" + (st.user ? st.user->info().name : std::string("?")) + "'"; break;
    case Kind::copy: what = "copy device to device"; break;
    case Kind::copy_from_host: what = "copy host to device"; break;
    case Kind::copy_to_host: what = "copy device to host"; break;
    case Kind::fill: what = "fill"; break;
    case Kind::wait: what = "wait for an event"; break;
    case Kind::nothing: what = "nothing"; break;
  }
  if (st.bytes) what += ", " + std::to_string(st.bytes) + " bytes";
  return "command " + std::to_string(st.index) + " (" + what + ")";
}

// Everything made for the commands before a failure goes with the unfinished graph.
Status ClDevice::create_graph(const plugin::Command* commands, std::size_t count, const std::string& name,
                              std::unique_ptr<plugin::Graph>& out) noexcept {
  return guarded("Recording::finish", [&] {
    auto g = std::make_unique<ClGraph>(name);
    g->steps_.reserve(count);
    g->kernels_.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      const plugin::Command& c = commands[i];
      if (c.kind == Kind::nothing) continue;
      g->steps_.emplace_back();
      ClGraph::Step& st = g->steps_.back();
      st.kind = c.kind;
      st.index = i;
      Status s = guarded("Recording::finish", [&] {
        g->note_shared(c.src);
        g->note_shared(c.dst);
        if (c.kind == Kind::launch) g->note_shared(c.args, c.arg_count);
        return pack(*this, *g, c, st);
      });
      if (!s.ok()) return named(std::move(s), st);
    }
    out = std::move(g);
    return Status::success();
  });
}

// OpenCL takes a kernel's arguments when it is enqueued, so replays enqueued before keep the old
// ones whatever happens to the kernel object afterwards. The new arguments go into a second kernel
// object (made at the first update, then reused), which replaces the replayed one only once all
// of them are set: a failure leaves the replayed kernel and its sub-buffers as they were. The one
// swapped out keeps stale argument values until the next update sets all of them again.
Status ClGraph::set_args(std::size_t index, const plugin::LaunchShape& shape, const plugin::KernelArg* args,
                         std::size_t arg_count) noexcept {
  return guarded("clSetKernelArg", [&] {
    const auto it = std::lower_bound(steps_.begin(), steps_.end(), index,
                                     [](const Step& st, std::size_t i) { return st.index < i; });
    if (it == steps_.end() || it->index != index || it->kind != Kind::launch)
      return Status::failure(ErrorCategory::internal,
                             "command " + std::to_string(index) + " is not a launch of this OpenCL graph",
                             "Graph::set_args");
    Step& st = *it;
    if (!st.spare) {
      Status s = own_kernel(*this, *st.user, st.spare);
      if (!s.ok()) return s;
    }
    st.spare_views.clear();
    Status s = set_kernel_args(*st.user, st.spare, args, arg_count, st.spare_views).status();
    if (!s.ok()) {
      st.spare_views.clear();
      return s;
    }
    note_shared(args, arg_count);
    std::swap(st.kernel, st.spare);
    st.views.swap(st.spare_views);
    st.spare_views.clear();  // enqueued commands hold what they use themselves
    st.range = nd_range(shape);
    return Status::success();
  });
}

// Only enqueues: every command was checked when recorded and packed when the graph was made. The
// core calls this for one graph at a time, so the graph's kernels need no lock. A failure names the
// command; the commands enqueued before it stay enqueued and run (graph.hpp says so).
Status ClQueue::replay(plugin::Graph& graph) noexcept {
  const ClGraph& g = static_cast<const ClGraph&>(graph);
  for (const auto& region : g.shared()) {  // coarse-grained shared memory: the device's first
    Status s = use_shared(region);
    if (!s.ok()) return s;
  }
  cl_command_queue q = queue_();
  for (const ClGraph::Step& st : g.steps()) {
    cl_int err = CL_SUCCESS;
    const char* call = "";
    switch (st.kind) {
      case Kind::launch:
        err = device_.enqueue_kernel(q, st.kernel, st.range.dims, st.range.global, st.range.local);
        call = "clEnqueueNDRangeKernel";
        break;
      case Kind::copy:
        err = clEnqueueCopyBuffer(q, st.src, st.dst, st.src_offset, st.dst_offset, st.bytes, 0, nullptr, nullptr);
        call = "clEnqueueCopyBuffer";
        break;
      case Kind::copy_from_host:  // pinned memory: asynchronous, as ClQueue::copy_from_host
        err = clEnqueueWriteBuffer(q, st.dst, CL_FALSE, st.dst_offset, st.bytes, st.host, 0, nullptr, nullptr);
        call = "clEnqueueWriteBuffer";
        break;
      case Kind::copy_to_host:
        err = clEnqueueReadBuffer(q, st.src, CL_FALSE, st.src_offset, st.bytes, st.host, 0, nullptr, nullptr);
        call = "clEnqueueReadBuffer";
        break;
      case Kind::fill:
        if (st.kernel) {  // as ClQueue::fill: a fill kernel on GPUs
          err = device_.enqueue_kernel(q, st.kernel, 1, st.range.global, st.range.local);
          call = "clEnqueueNDRangeKernel";
          break;
        }
        if (st.seed()) {
          const std::size_t first = std::min(st.bytes, fill_block_bytes);
          err = clEnqueueCopyBuffer(q, st.seed(), st.dst, 0, st.dst_offset, first, 0, nullptr, nullptr);
          if (err == CL_SUCCESS) err = fill_by_doubling(q, st.dst, st.dst_offset, first, st.bytes);
          call = "clEnqueueCopyBuffer";
          break;
        }
        err = clEnqueueFillBuffer(q, st.dst, st.pattern, st.pattern_size, st.dst_offset, st.bytes, 0, nullptr,
                                  nullptr);
        call = "clEnqueueFillBuffer";
        break;
      case Kind::wait: {
        cl_event e = st.event();
        err = clEnqueueBarrierWithWaitList(q, 1, &e, nullptr);
        call = "clEnqueueBarrierWithWaitList";
        break;
      }
      case Kind::nothing:
        break;
    }
    if (err != CL_SUCCESS)
      return guarded(call, [&] { return fail_enqueue(q, device_.native()(), err, call, ClGraph::describe(st)); });
  }
  return Status::success();
}

}  // namespace gpurt::opencl
