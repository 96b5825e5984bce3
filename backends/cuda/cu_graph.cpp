// CuGraph: a recorded command sequence (ABI 4.2) as one CUDA graph, instantiated once and replayed
// with one cuGraphLaunch.
//
// How the graph is made: stream capture rather than explicit node construction. create_graph
// begins a capture (CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) on a private non-blocking stream of the
// device's context and enqueues each command through this plugin's own queue code (a CuQueue
// borrowing that stream): launches, 1D copies and fills of any pattern (one memset, or strided 2D
// memsets per pattern column) become the nodes the driver itself makes for those calls, so a
// replay does exactly what the plain queue calls do (no hand-built CUDA_MEMCPY3D or memset node
// parameters to get wrong for large or unaligned ranges), and a command fails in the call a plain
// enqueue would make. An event wait is cuStreamWaitEvent with CU_EVENT_WAIT_EXTERNAL, which
// captures an event recorded outside the capture as an event-wait node. Work of one stream
// captures as a chain, so the commands run in order. Thread-local mode restricts only this
// thread's calls while capturing, and this thread makes no call that capture forbids: the one
// non-stream call of a launch, the >48 KiB dynamic shared memory opt-in (cuFuncSetAttribute), is
// made for every launch before the capture begins.
//
// After each launch the capture's dependency set (cuStreamGetCaptureInfo) is that launch's kernel
// node, kept for updates: cuGraphExecKernelNodeSetParams with the node's function, grid and block
// from creation and the new arguments and dynamic shared memory. CUDA copies the values; replays
// already enqueued keep the old ones. The driver does not promise that a failed update leaves the
// node as it was, so the graph keeps each launch's current argument values and sets them again
// after a failed update.
//
// A failure while the graph is made ends the capture (cuStreamEndCapture), destroys whatever was
// captured and names the command ("command 3 (launch 'saxpy'): ..."). Release: cuGraphExecDestroy,
// which the driver defers until replays in flight complete, then cuGraphDestroy.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cu_common.hpp"

namespace gpurt::cuda {

namespace {

// What a command is, for messages ("launch 'saxpy'"), as the core labels it.
std::string label_of(const plugin::Command& c) {
  const std::string bytes = ", " + std::to_string(c.bytes) + " bytes";
  switch (c.kind) {
    case plugin::Command::Kind::launch: return "launch '" + c.kernel->info().name + "'";
    case plugin::Command::Kind::copy: return "copy device to device" + bytes;
    case plugin::Command::Kind::copy_from_host: return "copy host to device" + bytes;
    case plugin::Command::Kind::copy_to_host: return "copy device to host" + bytes;
    case plugin::Command::Kind::fill: return "fill" + bytes;
    case plugin::Command::Kind::wait: return "wait for an event";
    case plugin::Command::Kind::nothing: break;
  }
  return "nothing";
}

// `s` with the command it happened in before its message.
Status in_command(Status s, std::size_t index, const plugin::Command& c) {
  s.message = "command " + std::to_string(index) + " (" + label_of(c) + "): " + s.message;
  return s;
}

Status internal(std::string message, const char* call) {
  return Status::failure(ErrorCategory::internal, std::move(message), call);
}

// The bytes of each packed argument (a device pointer, a scalar's value, a Local's tag): what a
// failed update sets again.
std::vector<std::vector<unsigned char>> values_of(const PackedLaunch& p, const plugin::KernelArg* args,
                                                  std::size_t count) {
  std::vector<std::vector<unsigned char>> v(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t size = args[i].kind == plugin::KernelArg::Kind::buffer   ? sizeof(CUdeviceptr)
                             : args[i].kind == plugin::KernelArg::Kind::scalar ? args[i].size
                                                                               : 1;
    const auto* bytes = static_cast<const unsigned char*>(p.params[i]);
    v[i].assign(bytes, bytes + size);
  }
  return v;
}

// A capture on `stream`; one still running when this goes (after a failure) is ended and what it
// captured destroyed.
class Capture {
 public:
  explicit Capture(CUstream stream) : stream_(stream) {}
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  ~Capture() {
    if (!active_) return;
    CUgraph g = nullptr;
    (void)cuStreamEndCapture(stream_, &g);
    Owner<GraphTraits> discard(g);
  }
  CUresult begin() {
    const CUresult r = cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    active_ = r == CUDA_SUCCESS;
    return r;
  }
  CUresult end(Owner<GraphTraits>& out) {
    active_ = false;
    CUgraph g = nullptr;
    const CUresult r = cuStreamEndCapture(stream_, &g);
    out = Owner<GraphTraits>(g);  // an invalidated capture may still hand back a graph: destroyed with `out`
    return r;
  }

 private:
  CUstream stream_;
  bool active_ = false;
};

const char* instantiate_reason(CUgraphInstantiateResult r) {
  switch (r) {
    case CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE: return " (the graph's structure is invalid)";
    case CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED: return " (a node's operation is not supported)";
    case CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED: return " (nodes of several contexts)";
    default: return "";
  }
}

// The nodes each command ends in (those of the capture's dependency set after it that were not
// there before it) with the command's index: to name the command that instantiation fails on.
using CommandEnds = std::vector<std::pair<CUgraphNode, std::size_t>>;

// Enqueues command `c` on `queue`, which borrows the capturing stream `raw`: the plain queue paths.
Status enqueue(CuQueue& queue, CUstream raw, const plugin::Command& c) {
  switch (c.kind) {
    case plugin::Command::Kind::launch: return queue.launch(*c.kernel, c.shape, c.args, c.arg_count).status();
    case plugin::Command::Kind::copy: return queue.copy(*c.src, c.src_offset, *c.dst, c.dst_offset, c.bytes);
    case plugin::Command::Kind::copy_from_host:
      return queue.copy_from_host(c.host, *c.dst, c.dst_offset, c.bytes, false);
    case plugin::Command::Kind::copy_to_host: return queue.copy_to_host(*c.src, c.src_offset, c.host, c.bytes, false);
    case plugin::Command::Kind::fill: return queue.fill(*c.dst, c.dst_offset, c.bytes, c.pattern, c.pattern_size);
    case plugin::Command::Kind::wait: {
      const CUresult r = cuStreamWaitEvent(raw, static_cast<CuEvent*>(c.event)->handle(), CU_EVENT_WAIT_EXTERNAL);
      return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuStreamWaitEvent");
    }
    case plugin::Command::Kind::nothing: break;
  }
  return Status::success();
}

}  // namespace

class CuGraph final : public plugin::Graph {
 public:
  // One recorded launch: its kernel node and what an update keeps from creation.
  struct Launch {
    std::size_t index = 0;  // of the command
    CUgraphNode node = nullptr;
    CuKernel* kernel = nullptr;      // kept alive by the core as long as the graph
    CUDA_KERNEL_NODE_PARAMS params{};  // function, grid, block; kernelParams set per update
    std::vector<std::vector<unsigned char>> values;  // the arguments now set, for a failed update
    std::size_t shared = 0;
  };

  explicit CuGraph(CUcontext ctx) : ctx_(ctx) {}
  ~CuGraph() override {
    if (!make_current(ctx_).ok()) log(plugin::LogLevel::warn, "could not make the context current to destroy a graph");
    exec_.reset();  // deferred by the driver until replays in flight complete
    graph_.reset();
  }

  Status set_args(std::size_t index, const plugin::LaunchShape& shape, const plugin::KernelArg* args,
                  std::size_t count) noexcept override {
    return guarded("cuGraphExecKernelNodeSetParams", [&] {
      const auto it = std::lower_bound(launches_.begin(), launches_.end(), index,
                                       [](const Launch& l, std::size_t i) { return l.index < i; });
      if (it == launches_.end() || it->index != index)
        return Status::failure(ErrorCategory::invalid_argument,
                               "command " + std::to_string(index) + " is not a launch of this graph",
                               "cuGraphExecKernelNodeSetParams");
      Launch& l = *it;
      Status s = make_current(ctx_);
      if (!s.ok()) return s;
      PackedLaunch p;
      s = pack_launch(*l.kernel, shape, args, count, p).status();
      if (!s.ok()) return s;
      std::vector<std::vector<unsigned char>> next = values_of(p, args, count);
      CUDA_KERNEL_NODE_PARAMS np = l.params;
      np.sharedMemBytes = static_cast<unsigned>(p.shared);
      np.kernelParams = count ? p.params : nullptr;
      const CUresult r = cuGraphExecKernelNodeSetParams(exec_.get(), l.node, &np);
      if (r != CUDA_SUCCESS) {
        restore(l);
        return fail(r, "cuGraphExecKernelNodeSetParams", "setting the launch's new arguments");
      }
      l.values = std::move(next);
      l.shared = p.shared;
      return Status::success();
    });
  }

  CUcontext context() const { return ctx_; }
  CUgraphExec exec() const { return exec_.get(); }

 private:
  friend class CuDevice;

  // The steps of CuDevice::create_graph, in order. Packs each launch once before the capture, which
  // raises a kernel's dynamic shared memory limit where the launch needs it (a call the capture
  // would refuse), and keeps what updates need.
  Status pack_launches(const plugin::Command* commands, std::size_t count);
  // Captures the commands into graph_ through `queue` (borrowing the stream `raw`).
  Status capture(CuQueue& queue, CUstream raw, const plugin::Command* commands, std::size_t count,
                 CommandEnds& ends);
  // After command i: checks the capture is still on, keeps a launch's kernel node, and notes the
  // nodes command i ends in (`before`: the dependency set after the previous command).
  Status note_nodes(CUstream raw, const plugin::Command& c, std::size_t i, std::vector<Launch>::iterator& launch,
                    std::vector<CUgraphNode>& before, CommandEnds& ends);
  // Instantiates graph_ and uploads it on `raw`; a failed node names its command.
  Status instantiate(CUstream raw, const plugin::Command* commands, const CommandEnds& ends);

  // Sets `l`'s kept arguments again after a failed update (which the driver does not promise to
  // leave without effect); a failure here is logged: the update's own failure is what is reported.
  void restore(Launch& l) noexcept {
    void* params[PackedLaunch::max_params];
    const std::size_t n = std::min(l.values.size(), PackedLaunch::max_params);
    for (std::size_t i = 0; i < n; ++i) params[i] = l.values[i].data();
    CUDA_KERNEL_NODE_PARAMS np = l.params;
    np.sharedMemBytes = static_cast<unsigned>(l.shared);
    np.kernelParams = n ? params : nullptr;
    if (cuGraphExecKernelNodeSetParams(exec_.get(), l.node, &np) != CUDA_SUCCESS)
      log(plugin::LogLevel::error, "a graph launch's arguments could not be set back after a failed update");
  }

  CUcontext ctx_;
  Owner<GraphTraits> graph_;  // the captured graph: its kernel nodes name the nodes an update changes
  Owner<GraphExecTraits> exec_;
  std::vector<Launch> launches_;  // by command index
};

Status CuDevice::create_graph(const plugin::Command* commands, std::size_t count, const std::string&,
                              std::unique_ptr<plugin::Graph>& out) noexcept {
  return guarded("create_graph", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    auto graph = std::make_unique<CuGraph>(ctx_);
    if (s = graph->pack_launches(commands, count); !s.ok()) return s;
    CUstream raw = nullptr;
    const CUresult r = cuStreamCreate(&raw, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) return fail(r, "cuStreamCreate", "creating the stream a graph is captured on");
    const Owner<StreamTraits> stream(raw);
    CuQueue queue(*this, ctx_, raw, false);  // borrows the stream: the plain queue paths, captured
    CommandEnds ends;
    if (s = graph->capture(queue, raw, commands, count, ends); !s.ok()) return s;
    if (s = graph->instantiate(raw, commands, ends); !s.ok()) return s;
    out = std::move(graph);
    return Status::success();
  });
}

Status CuGraph::pack_launches(const plugin::Command* commands, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const plugin::Command& c = commands[i];
    if (c.kind != plugin::Command::Kind::launch) continue;
    Launch l;
    l.index = i;
    l.kernel = static_cast<CuKernel*>(c.kernel);
    PackedLaunch p;
    Status s = pack_launch(*l.kernel, c.shape, c.args, c.arg_count, p).status();
    if (!s.ok()) return in_command(std::move(s), i, c);
    l.values = values_of(p, c.args, c.arg_count);
    l.shared = p.shared;
    l.params.func = l.kernel->function();
    l.params.gridDimX = static_cast<unsigned>(c.shape.groups.x);
    l.params.gridDimY = static_cast<unsigned>(c.shape.groups.y);
    l.params.gridDimZ = static_cast<unsigned>(c.shape.groups.z);
    l.params.blockDimX = static_cast<unsigned>(c.shape.group_size.x);
    l.params.blockDimY = static_cast<unsigned>(c.shape.group_size.y);
    l.params.blockDimZ = static_cast<unsigned>(c.shape.group_size.z);
    l.params.ctx = ctx_;  // ignored while func is set
    launches_.push_back(std::move(l));
  }
  return Status::success();
}

Status CuGraph::capture(CuQueue& queue, CUstream raw, const plugin::Command* commands, std::size_t count,
                        CommandEnds& ends) {
  std::vector<CUgraphNode> before;  // the dependency set after the previous command (one node, as a rule)
  auto launch = launches_.begin();
  Capture session(raw);  // ended (and its graph destroyed) before the stream goes
  CUresult r = session.begin();
  if (r != CUDA_SUCCESS) return fail(r, "cuStreamBeginCapture", "capturing a graph");
  for (std::size_t i = 0; i < count; ++i) {
    const plugin::Command& c = commands[i];
    if (c.kind == plugin::Command::Kind::nothing) continue;
    Status s = enqueue(queue, raw, c);
    if (!s.ok()) return in_command(std::move(s), i, c);
    if (s = note_nodes(raw, c, i, launch, before, ends); !s.ok()) return in_command(std::move(s), i, c);
  }
  r = session.end(graph_);
  if (r != CUDA_SUCCESS) return fail(r, "cuStreamEndCapture", "capturing a graph");
  return Status::success();
}

Status CuGraph::note_nodes(CUstream raw, const plugin::Command& c, std::size_t i, std::vector<Launch>::iterator& launch,
                           std::vector<CUgraphNode>& before, CommandEnds& ends) {
  CUstreamCaptureStatus state = CU_STREAM_CAPTURE_STATUS_NONE;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;  // asked for so that edge data never makes the query fail
  std::size_t n = 0;
  const CUresult r = cuStreamGetCaptureInfo(raw, &state, nullptr, nullptr, &deps, &edges, &n);
  if (r != CUDA_SUCCESS) return fail(r, "cuStreamGetCaptureInfo");
  if (state != CU_STREAM_CAPTURE_STATUS_ACTIVE)
    return internal("the driver ended the graph's capture (cuStreamGetCaptureInfo: not active)",
                    "cuStreamGetCaptureInfo");
  if (c.kind == plugin::Command::Kind::launch) {
    CUgraphNodeType type = CU_GRAPH_NODE_TYPE_EMPTY;
    if (n != 1 || cuGraphNodeGetType(deps[0], &type) != CUDA_SUCCESS || type != CU_GRAPH_NODE_TYPE_KERNEL)
      return internal("the captured launch did not end in one kernel node", "cuStreamGetCaptureInfo");
    launch->node = deps[0];
    ++launch;
  }
  for (std::size_t d = 0; d < n; ++d)
    if (std::find(before.begin(), before.end(), deps[d]) == before.end()) ends.emplace_back(deps[d], i);
  before.assign(deps, deps + n);
  return Status::success();
}

Status CuGraph::instantiate(CUstream raw, const plugin::Command* commands, const CommandEnds& ends) {
  CUDA_GRAPH_INSTANTIATE_PARAMS ip{};
  ip.flags = CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;  // the first replay does not pay the upload
  ip.hUploadStream = raw;
  CUgraphExec exec = nullptr;
  CUresult r = cuGraphInstantiateWithParams(&exec, graph_.get(), &ip);
  exec_ = Owner<GraphExecTraits>(r == CUDA_SUCCESS ? exec : nullptr);
  if (r != CUDA_SUCCESS) {
    const std::string what = std::string("instantiating the graph") + instantiate_reason(ip.result_out);
    for (const auto& e : ends)
      if (ip.hErrNode_out && e.first == ip.hErrNode_out)
        return in_command(fail(r, "cuGraphInstantiateWithParams", what), e.second, commands[e.second]);
    return fail(r, "cuGraphInstantiateWithParams", what);
  }
  r = cuStreamSynchronize(raw);  // the upload, before its stream goes
  if (r != CUDA_SUCCESS) return fail(r, "cuStreamSynchronize", "uploading the graph");
  return Status::success();
}

// The graph's nodes run in the order of its commands after the stream's earlier work; the driver
// also orders each launch after earlier launches of the same graph on any stream.
Status CuQueue::replay(plugin::Graph& graph) noexcept {
  return guarded("cuGraphLaunch", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    const CUresult r = cuGraphLaunch(static_cast<CuGraph&>(graph).exec(), stream_);
    return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuGraphLaunch");
  });
}

}  // namespace gpurt::cuda
