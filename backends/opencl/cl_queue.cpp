// ClQueue and ClEvent: copies, fills, launches and synchronisation on a cl_command_queue.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {
ClBuffer& buf(plugin::Buffer& b) { return static_cast<ClBuffer&>(b); }
}  // namespace

namespace {
// Small uploads from pageable memory are copied into memory of the plugin's own and enqueued
// without blocking; a non-blocking write from the caller's memory may read it after the call
// returns (PoCL does), which would race with the caller, and a blocking write waits for all earlier
// work on the queue. Measured on NVIDIA OpenCL (H200, gpurt bench --quick, against the raw
// non-blocking write): a blocking write ran at 0.36 x raw at 4 KiB and 0.40 x at 64 KiB; private
// copies at 0.77 x at 4 KiB but 0.21 x at 64 KiB (the driver appears to prepare each new host
// address), and 0.33 x with a completion callback per copy. So private copies up to 8 KiB, the
// blocking write above that (staging takes over from the measured cut-over). The copies are freed
// after the queue's next clFinish: at finish(), or here once they hold more than pending_budget
// bytes or 4096 copies.
constexpr std::size_t private_copy_limit = 8u << 10;
constexpr std::size_t pending_budget = 64u << 20;
}  // namespace

void ClQueue::free_pending() noexcept {
  for (void* p : pending_) std::free(p);
  pending_.clear();
  pending_bytes_ = 0;
}

ClQueue::~ClQueue() {
  // The core opens every gate before it releases the queue; one left (it could not) is completed
  // with an error, which ends the commands that wait for it instead of leaving them waiting.
  for (cl_event e : gates_) {
    (void)clSetUserEventStatus(e, -1);
    (void)clReleaseEvent(e);
  }
  device_.forget_launches(queue_());
  if (!shared_used_.empty()) {  // shared memory it used goes back to the host, as at a finish
    (void)clFinish(queue_());
    (void)map_shared();
  }
  if (!pending_.empty()) {
    (void)clFinish(queue_());
    free_pending();
  }
}

namespace {
// A failed host copy of `mem`. A cl_mem the application made with CL_MEM_HOST_NO_ACCESS,
// CL_MEM_HOST_READ_ONLY or CL_MEM_HOST_WRITE_ONLY (an imported buffer: gpurt makes none) refuses
// the host copies its flags forbid with CL_INVALID_OPERATION: that is the caller's buffer, so
// invalid_argument naming the flag and what to do, not the bare code.
Status host_copy_failed(cl_command_queue queue, cl_device_id device, cl_mem mem, bool write, cl_int err,
                        const char* call) noexcept {
  cl_mem_flags flags = 0;
  if (err == CL_INVALID_OPERATION &&
      clGetMemObjectInfo(mem, CL_MEM_FLAGS, sizeof flags, &flags, nullptr) == CL_SUCCESS) {
    const char* flag = (flags & CL_MEM_HOST_NO_ACCESS)                      ? "CL_MEM_HOST_NO_ACCESS"
                       : write && (flags & CL_MEM_HOST_READ_ONLY) != 0      ? "CL_MEM_HOST_READ_ONLY"
                       : !write && (flags & CL_MEM_HOST_WRITE_ONLY) != 0    ? "CL_MEM_HOST_WRITE_ONLY"
                                                                             : nullptr;
    if (flag)
      return guarded(call, [&] {
        return Status::failure(ErrorCategory::invalid_argument,
                               std::string("the buffer's cl_mem was made with ") + flag + ", so the host cannot " +
                                   (write ? "write" : "read") +
                                   " it; copy through another buffer of the device (Queue::copy between buffers), "
                                   "or make the cl_mem without that flag before importing it",
                               call, err, name_of(err));
      });
  }
  return fail_enqueue(queue, device, err, call);
}
}  // namespace

// Blocking copies (pageable host memory) return once the source may be reused: small ones through
// a private copy (above), larger ones with the driver's blocking form.
Status ClQueue::copy_from_host(const void* src, plugin::Buffer& dst, std::size_t dst_offset,
                               std::size_t bytes, bool blocking) noexcept {
  if (device_.coarse_shared()) {  // coarse-grained shared memory on either side (cl_shared.cpp)
    bool handled = false;
    Status s = copy_shared_host(src, dst, dst_offset, bytes, true, blocking, handled);
    if (handled || !s.ok()) return s;
    s = use_shared(dst);
    if (!s.ok()) return s;
  }
  if (blocking && bytes <= private_copy_limit) {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    if (pending_bytes_ + bytes > pending_budget || pending_.size() >= 4096) {
      const cl_int err = clFinish(queue_());
      if (err != CL_SUCCESS) return fail_wait(device_.native()(), err, "clFinish");
      free_pending();
    }
    void* copy = std::malloc(bytes ? bytes : 1);
    if (copy) {
      try {
        pending_.push_back(copy);
      } catch (...) {
        std::free(copy);
        copy = nullptr;
      }
    }
    if (copy) {
      std::memcpy(copy, src, bytes);
      pending_bytes_ += bytes;
      const cl_int err = clEnqueueWriteBuffer(queue_(), buf(dst).handle(), CL_FALSE, dst_offset, bytes, copy, 0,
                                              nullptr, nullptr);
      return err == CL_SUCCESS ? Status::success()
                               : host_copy_failed(queue_(), device_.native()(), buf(dst).handle(), true, err,
                                                  "clEnqueueWriteBuffer");
    }
  }
  const cl_int err = clEnqueueWriteBuffer(queue_(), buf(dst).handle(), blocking ? CL_TRUE : CL_FALSE, dst_offset, bytes,
                                          src, 0, nullptr, nullptr);
  return err == CL_SUCCESS ? Status::success()
                           : host_copy_failed(queue_(), device_.native()(), buf(dst).handle(), true, err,
                                              "clEnqueueWriteBuffer");
}

Status ClQueue::copy_to_host(plugin::Buffer& src, std::size_t src_offset, void* dst,
                             std::size_t bytes, bool blocking) noexcept {
  if (device_.coarse_shared()) {
    bool handled = false;
    Status s = copy_shared_host(dst, src, src_offset, bytes, false, blocking, handled);
    if (handled || !s.ok()) return s;
    s = use_shared(src);
    if (!s.ok()) return s;
  }
  const cl_int err = clEnqueueReadBuffer(queue_(), buf(src).handle(), blocking ? CL_TRUE : CL_FALSE, src_offset, bytes,
                                         dst, 0, nullptr, nullptr);
  return err == CL_SUCCESS ? Status::success()
                           : host_copy_failed(queue_(), device_.native()(), buf(src).handle(), false, err,
                                              "clEnqueueReadBuffer");
}

Status ClQueue::copy(plugin::Buffer& src, std::size_t src_offset, plugin::Buffer& dst,
                     std::size_t dst_offset, std::size_t bytes) noexcept {
  if (device_.coarse_shared()) {
    Status s = use_shared(src);
    if (s.ok()) s = use_shared(dst);
    if (!s.ok()) return s;
  }
  const cl_int err = clEnqueueCopyBuffer(queue_(), buf(src).handle(), buf(dst).handle(), src_offset,
                                         dst_offset, bytes, 0, nullptr, nullptr);
  return err == CL_SUCCESS ? Status::success() : fail_enqueue(queue_(), device_.native()(), err, "clEnqueueCopyBuffer");
}

Status ClQueue::fill(plugin::Buffer& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                     std::size_t pattern_size) noexcept {
  // (A fill at an offset that is not a multiple of the pattern is several commands, below; the core
  // holds the queue's order lock for the whole call, so no other thread's command lands between them.)
  if (device_.coarse_shared()) {
    Status s = use_shared(dst);
    if (!s.ok()) return s;
  }
  Status through_kernel;
  if (device_.fill_with_kernel(queue_, buf(dst).handle(), offset, bytes, pattern, pattern_size, through_kernel))
    return through_kernel;
  if (offset % pattern_size != 0) return fill_by_copies(dst, offset, bytes, pattern, pattern_size);
  const cl_int err = clEnqueueFillBuffer(queue_(), buf(dst).handle(), pattern, pattern_size, offset,
                                         bytes, 0, nullptr, nullptr);
  return err == CL_SUCCESS ? Status::success() : fail_enqueue(queue_(), device_.native()(), err, "clEnqueueFillBuffer");
}

// clEnqueueFillBuffer takes only an offset that is a multiple of the pattern's size, which a view
// seen through Buffer::as<U>() need not have (8-byte elements at byte 4). Such a fill writes the
// pattern repeated over its first 4 KiB (a multiple of every pattern size), then copies the filled
// part after itself, doubling it each time: the regions never overlap, and the queue keeps them in
// order. Graph replays do the same from a device copy of the block (cl_graph.cpp).
std::size_t repeat_pattern(unsigned char (&block)[fill_block_bytes], std::size_t bytes, const void* pattern,
                           std::size_t pattern_size) noexcept {
  const std::size_t first = std::min(bytes, sizeof block);
  for (std::size_t i = 0; i < first; i += pattern_size) std::memcpy(block + i, pattern, pattern_size);
  return first;
}

cl_int fill_by_doubling(cl_command_queue queue, cl_mem mem, std::size_t offset, std::size_t filled,
                        std::size_t bytes) noexcept {
  for (std::size_t done = filled; done < bytes;) {
    const std::size_t n = std::min(done, bytes - done);
    const cl_int err = clEnqueueCopyBuffer(queue, mem, mem, offset, offset + done, n, 0, nullptr, nullptr);
    if (err != CL_SUCCESS) return err;
    done += n;
  }
  return CL_SUCCESS;
}

Status ClQueue::fill_by_copies(plugin::Buffer& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                               std::size_t pattern_size) noexcept {
  unsigned char block[fill_block_bytes] = {};
  const std::size_t first = repeat_pattern(block, bytes, pattern, pattern_size);
  Status s = copy_from_host(block, dst, offset, first, true);
  if (!s.ok()) return s;
  const cl_int err = fill_by_doubling(queue_(), buf(dst).handle(), offset, first, bytes);
  return err == CL_SUCCESS ? Status::success() : fail_enqueue(queue_(), device_.native()(), err, "clEnqueueCopyBuffer");
}

plugin::Outcome set_kernel_args(const ClKernel& k, cl_kernel target, const plugin::KernelArg* args,
                                std::size_t count, std::vector<cl::Buffer>& views) noexcept {
  cl_uint index = 0;  // native argument index: a portable kernel's global pointer takes two
  std::size_t local_args = 0;  // bytes in __local arguments (saturating)
  std::size_t local_count = 0;  // __local arguments
  for (std::size_t i = 0; i < count; ++i, ++index) {
    const plugin::KernelArg& a = args[i];
    cl_int err = CL_SUCCESS;
    switch (a.kind) {
      case plugin::KernelArg::Kind::buffer: {
        cl_mem mem = nullptr;
        if (k.takes_offset(i)) {  // the whole cl_mem and the view's byte offset
          const cl_ulong offset = a.buffer ? a.offset : 0;
          if (a.buffer) mem = buf(*a.buffer).handle();
          err = clSetKernelArg(target, index, sizeof(cl_mem), mem ? &mem : nullptr);
          if (err == CL_SUCCESS) err = clSetKernelArg(target, ++index, sizeof offset, &offset);
          break;
        }
        if (a.buffer && a.size != 0) {
          cl::Buffer hold;
          Status s = buf(*a.buffer).kernel_handle(a.offset, a.size, mem, hold);
          if (!s.ok()) return s;
          if (hold()) {
            try {
              views.push_back(std::move(hold));
            } catch (...) {
              return Status::failure(ErrorCategory::out_of_host_memory, "host memory ran out", "Queue::launch");
            }
          }
        }
        err = clSetKernelArg(target, index, sizeof(cl_mem), mem ? &mem : nullptr);
        break;
      }
      case plugin::KernelArg::Kind::scalar:
        err = clSetKernelArg(target, index, a.size, a.value);
        break;
      case plugin::KernelArg::Kind::local:
        err = clSetKernelArg(target, index, a.size, nullptr);
        local_args = local_args + a.size < local_args ? SIZE_MAX : local_args + a.size;
        ++local_count;
        break;
    }
    if (err != CL_SUCCESS)
      return fail(err, "clSetKernelArg", "setting argument " + std::to_string(i) + " of '" + k.info().name + "'");
  }
  // The core has checked the kernel's own bytes plus the arguments against the limit; the driver
  // may lay the arguments out with padding of its own (NVIDIA: up to 12 bytes for two arguments,
  // measured), so near the limit its count decides. The margin - 256 bytes and 64 per local
  // argument - is far more than any driver's padding seen, and launches far below it ask nothing.
  const std::size_t own = k.info().static_local_bytes;
  const std::size_t padding_margin = 256 + 64 * local_count;
  if (local_args > 0 && own + local_args + padding_margin > k.local_memory()) {
    cl_ulong counted = 0;
    if (clGetKernelWorkGroupInfo(target, k.device(), CL_KERNEL_LOCAL_MEM_SIZE, sizeof counted, &counted, nullptr) ==
            CL_SUCCESS &&
        counted > k.local_memory())
      return Status::failure(ErrorCategory::invalid_argument,
                             "too much local memory: the OpenCL driver counts " + std::to_string(counted) +
                                 " bytes per group for this launch of '" + k.info().name + "' (the kernel's own " +
                                 std::to_string(own) + " and " + std::to_string(local_args) +
                                 " in local arguments and dynamic local memory, laid out with the driver's "
                                 "padding) but the device offers " + std::to_string(k.local_memory()) +
                                 "; ask for " + std::to_string(counted - k.local_memory()) + " bytes less",
                             "Queue::launch");
  }
  return {};
}

NdRange nd_range(const plugin::LaunchShape& shape) noexcept {
  const Dim3 g = shape.groups, l = shape.group_size;
  NdRange r;
  r.global[0] = g.x * l.x, r.global[1] = g.y * l.y, r.global[2] = g.z * l.z;
  r.local[0] = l.x, r.local[1] = l.y, r.local[2] = l.z;
  r.dims = (g.z == 1 && l.z == 1) ? ((g.y == 1 && l.y == 1) ? 1 : 2) : 3;
  return r;
}

plugin::Outcome ClQueue::launch(plugin::Kernel& kernel, const plugin::LaunchShape& shape,
                                const plugin::KernelArg* args, std::size_t count) noexcept {
  ClKernel& k = static_cast<ClKernel&>(kernel);
  // clSetKernelArg and the enqueue that reads the arguments must not interleave between threads
  // sharing the kernel. A launch with no arguments sets none, and enqueueing is thread-safe: it
  // takes no lock, as a raw program launching one cl_kernel from several threads takes none.
  std::unique_lock<std::mutex> lock(k.mutex(), std::defer_lock);
  if (count > 0) lock.lock();
  if (device_.coarse_shared()) {  // coarse-grained shared memory among the arguments: unmapped first
    for (std::size_t i = 0; i < count; ++i) {
      if (args[i].kind != plugin::KernelArg::Kind::buffer || !args[i].buffer) continue;
      Status s = use_shared(*args[i].buffer);
      if (!s.ok()) return s;
    }
  }
  std::vector<cl::Buffer> views;  // sub-buffers in use by this launch (OpenCL C kernels only)
  if (plugin::Outcome set = set_kernel_args(k, k.handle(), args, count, views); !set.ok()) return set;
  const NdRange r = nd_range(shape);
  const cl_int err = device_.enqueue_kernel(queue_(), k.handle(), r.dims, r.global, r.local);
  if (err == CL_SUCCESS) return {};
  return fail_enqueue(queue_(), device_.native()(), err, "clEnqueueNDRangeKernel", "launching '" + k.info().name + "'");
}

Status ClQueue::record(bool, std::unique_ptr<plugin::Event>& out) noexcept {
  return guarded("clEnqueueMarkerWithWaitList", [&] {
    cl_event e = nullptr;
    const cl_int err = clEnqueueMarkerWithWaitList(queue_(), 0, nullptr, &e);
    if (err != CL_SUCCESS) return fail(err, "clEnqueueMarkerWithWaitList");
    out = std::make_unique<ClEvent>(cl::Event(e), device_.native()());  // adopts the reference
    return Status::success();
  });
}

Status ClQueue::record_again(plugin::Event& event) noexcept {
  return guarded("clEnqueueMarkerWithWaitList", [&] {
    cl_event e = nullptr;
    const cl_int err = clEnqueueMarkerWithWaitList(queue_(), 0, nullptr, &e);
    if (err != CL_SUCCESS) return fail(err, "clEnqueueMarkerWithWaitList");
    static_cast<ClEvent&>(event).replace(cl::Event(e));  // adopts the reference
    return Status::success();
  });
}

Status ClQueue::wait(plugin::Event& event) noexcept {
  ClEvent& e = static_cast<ClEvent&>(event);
  cl_context ctx = nullptr;
  cl_int err = clGetEventInfo(e.handle(), CL_EVENT_CONTEXT, sizeof ctx, &ctx, nullptr);
  if (err != CL_SUCCESS) return fail(err, "clGetEventInfo");
  // An event of another context (platform) cannot enter this queue: unsupported, and the core
  // waits for it on the host.
  if (ctx != context_)
    return Status::failure(ErrorCategory::unsupported,
                           "an OpenCL queue cannot wait on an event of another cl_context", "clEnqueueBarrierWithWaitList");
  cl_event h = e.handle();
  err = clEnqueueBarrierWithWaitList(queue_(), 1, &h, nullptr);
  return err == CL_SUCCESS ? Status::success() : fail(err, "clEnqueueBarrierWithWaitList");
}

// Copies enqueued before this call are done once clFinish returns; ones another thread adds
// meanwhile stay pending.
Status ClQueue::finish() noexcept {
  std::vector<void*> done;
  {
    std::lock_guard<std::mutex> lock(pending_mutex_);
    done.swap(pending_);
    pending_bytes_ = 0;
  }
  const cl_int err = clFinish(queue_());
  if (err != CL_SUCCESS) {
    std::lock_guard<std::mutex> lock(pending_mutex_);  // still in use: keep them until the next finish
    for (void* p : done) {
      try {
        pending_.push_back(p);
      } catch (...) {
        // cannot keep track of it: leaking it is safer than freeing what the driver may read
      }
    }
    return fail_wait(device_.native()(), err, "clFinish");
  }
  for (void* p : done) std::free(p);
  return map_shared();  // coarse-grained shared memory this queue used: the host's again
}

Status ClQueue::wait_gate(std::uint64_t& gate) noexcept {
  std::lock_guard<std::mutex> lock(gate_mutex_);
  cl_int err = CL_SUCCESS;
  cl_event user = clCreateUserEvent(context_, &err);
  if (err != CL_SUCCESS) return fail(err, "clCreateUserEvent", "making a host-work gate");
  try {
    gates_.push_back(user);
  } catch (...) {
    (void)clReleaseEvent(user);
    return Status::failure(ErrorCategory::out_of_host_memory, "no host memory for a host-work gate", "wait_gate");
  }
  err = clEnqueueBarrierWithWaitList(queue_(), 1, &user, nullptr);
  if (err != CL_SUCCESS) {
    gates_.pop_back();
    (void)clReleaseEvent(user);
    return fail(err, "clEnqueueBarrierWithWaitList", "enqueueing a host-work gate");
  }
  clFlush(queue_());  // the work before the gate, which the host function waits for, is submitted
  gate = ++gates_made_;
  return Status::success();
}

Status ClQueue::open_gate(std::uint64_t gate) noexcept {
  cl_event user = nullptr;
  {
    std::lock_guard<std::mutex> lock(gate_mutex_);
    if (gates_.empty() || gate != gates_made_ - gates_.size() + 1)
      return Status::failure(ErrorCategory::internal, "gate " + std::to_string(gate) + " opened out of order",
                             "open_gate");
    user = gates_.front();
    gates_.pop_front();
  }
  const cl_int err = clSetUserEventStatus(user, CL_COMPLETE);
  (void)clReleaseEvent(user);
  return err == CL_SUCCESS ? Status::success() : fail(err, "clSetUserEventStatus", "opening a host-work gate");
}

Status ClEvent::wait() noexcept {
  cl_event h = event_();
  const cl_int err = clWaitForEvents(1, &h);
  return err == CL_SUCCESS ? Status::success() : fail_wait(device(), err, "clWaitForEvents");
}

Status ClEvent::query(bool& complete) noexcept {
  cl_int state = 0;
  const cl_int err = clGetEventInfo(event_(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof state, &state, nullptr);
  // After a fault NVIDIA's driver fails the query itself (CL_UNKNOWN_ERROR, -9999, H200 driver
  // 580): device_lost there, as every later failure on a faulted device (errors.md).
  if (err != CL_SUCCESS) return fail_on(device(), err, "clGetEventInfo");
  if (state < 0) return fail_wait(device(), state, "clGetEventInfo", "the work before this event failed on the device");
  complete = state == CL_COMPLETE;
  // A driver may hold enqueued commands until a flush (OpenCL promises progress only to blocking
  // calls), so a host polling for the event submits them.
  cl_command_queue queue = nullptr;
  if (!complete && clGetEventInfo(event_(), CL_EVENT_COMMAND_QUEUE, sizeof queue, &queue, nullptr) == CL_SUCCESS && queue)
    clFlush(queue);
  return Status::success();
}

Status ClEvent::elapsed_ms(plugin::Event& end_event, double& ms) noexcept {
  ClEvent& end = static_cast<ClEvent&>(end_event);
  Status s = end.wait();
  if (!s.ok()) return s;
  s = wait();
  if (!s.ok()) return s;
  cl_ulong t0 = 0, t1 = 0;
  cl_int err = clGetEventProfilingInfo(event_(), CL_PROFILING_COMMAND_END, sizeof t0, &t0, nullptr);
  if (err == CL_SUCCESS)
    err = clGetEventProfilingInfo(end.event_(), CL_PROFILING_COMMAND_END, sizeof t1, &t1, nullptr);
  if (err != CL_SUCCESS) return fail(err, "clGetEventProfilingInfo", "reading event times");
  ms = (static_cast<double>(t1) - static_cast<double>(t0)) * 1e-6;
  return Status::success();
}

}  // namespace gpurt::opencl
