// CuQueue and CuEvent: asynchronous copies, fills, launches and synchronisation on a CUstream.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

#include "cu_common.hpp"

namespace gpurt::cuda {

namespace {

CUdeviceptr ptr_of(plugin::Buffer& b, std::size_t offset) {
  return static_cast<CuBuffer&>(b).ptr() + offset;
}

bool periodic(const unsigned char* p, std::size_t size, std::size_t period) {
  for (std::size_t i = period; i < size; ++i)
    if (p[i] != p[i - period]) return false;
  return true;
}

}  // namespace

CuQueue::~CuQueue() {
  if (!gate_word_ && !owned_) return;  // nothing of ours: a borrowed stream stays the application's
  const bool current = make_current(ctx_).ok();
  if (!current) log(plugin::LogLevel::warn, "could not make the context current to destroy a stream");
  if (gate_word_) {
    // Every gate is open (the core opens them before it releases the queue), but the stream may not
    // have read the word yet: it must be done with it before the memory goes. A gate the core could
    // not open is opened here, so the stream's work ends instead of waiting for ever.
    static_cast<std::atomic<std::uint32_t>*>(gate_word_)->store(gates_made_, std::memory_order_release);
    if (current && cuStreamSynchronize(stream_) == CUDA_SUCCESS)
      (void)cuMemFreeHost(gate_word_);
    else
      log(plugin::LogLevel::warn, "kept a host-work gate's 4 bytes of pinned memory: the stream could not be synchronised");
  }
  if (!owned_) return;  // a borrowed stream stays the application's
  owned_.reset();
}

// Blocking copies: from pageable memory the driver's async copies already return once the host
// side is done (uploads are staged by the driver before it returns, downloads complete before it
// returns), so `blocking` needs nothing more here. Memory the application page-locked itself
// through the CUDA driver (cuMemHostAlloc, cuMemHostRegister) is copied asynchronously by the
// driver; the docs say so (asking the driver about every pointer cost 0.7 us per 4 KiB copy).
Status CuQueue::copy_from_host(const void* src, plugin::Buffer& dst, std::size_t dst_offset,
                               std::size_t bytes, bool) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  // Managed memory (the host side of Device::alloc_shared) as what it is: cuMemcpyHtoDAsync takes
  // it for pageable memory and waits for the stream before copying (seen on the H100: a copy
  // waiting so, while the core's order lock was held, kept another queue's host function from
  // enqueueing the fill this stream waited for), where cuMemcpyAsync copies it in the stream's order
  // without blocking; the core waits for a marker after it.
  if (device_.allocations().managed(src, bytes)) {
    const CUresult r =
        cuMemcpyAsync(ptr_of(dst, dst_offset), static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(src)), bytes,
                      stream_);
    return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemcpyAsync");
  }
  const CUresult r = cuMemcpyHtoDAsync(ptr_of(dst, dst_offset), src, bytes, stream_);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemcpyHtoDAsync");
}

Status CuQueue::copy_to_host(plugin::Buffer& src, std::size_t src_offset, void* dst,
                             std::size_t bytes, bool) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  if (device_.allocations().managed(dst, bytes)) {  // as copy_from_host
    const CUresult r =
        cuMemcpyAsync(static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(dst)), ptr_of(src, src_offset), bytes,
                      stream_);
    return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemcpyAsync");
  }
  const CUresult r = cuMemcpyDtoHAsync(dst, ptr_of(src, src_offset), bytes, stream_);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemcpyDtoHAsync");
}

Status CuQueue::copy(plugin::Buffer& src, std::size_t src_offset, plugin::Buffer& dst,
                     std::size_t dst_offset, std::size_t bytes) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  const CUresult r = cuMemcpyDtoDAsync(ptr_of(dst, dst_offset), ptr_of(src, src_offset), bytes, stream_);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemcpyDtoDAsync");
}

// The driver's memsets take 1-, 2- or 4-byte values. A longer pattern is written as several
// strided 2D memsets, one per 4-, 2- or 1-byte column of the pattern, with the pattern as pitch.
Status CuQueue::fill(plugin::Buffer& dst, std::size_t offset, std::size_t bytes, const void* pattern,
                     std::size_t pattern_size) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  const auto* pat = static_cast<const unsigned char*>(pattern);
  std::size_t period = pattern_size;
  for (std::size_t d = 1; d < pattern_size; d *= 2)
    if (periodic(pat, pattern_size, d)) {
      period = d;
      break;
    }
  const CUdeviceptr ptr = ptr_of(dst, offset);
  CUstream st = stream_;
  CUresult r = CUDA_SUCCESS;
  if (period == 1) {
    r = cuMemsetD8Async(ptr, pat[0], bytes, st);
    return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemsetD8Async");
  }
  if (period == 2 && ptr % 2 == 0) {
    std::uint16_t v;
    std::memcpy(&v, pat, 2);
    r = cuMemsetD16Async(ptr, v, bytes / 2, st);
    return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemsetD16Async");
  }
  if (period == 4 && ptr % 4 == 0) {
    std::uint32_t v;
    std::memcpy(&v, pat, 4);
    r = cuMemsetD32Async(ptr, v, bytes / 4, st);
    return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemsetD32Async");
  }
  const std::size_t unit = (period % 4 == 0 && ptr % 4 == 0) ? 4 : (period % 2 == 0 && ptr % 2 == 0) ? 2 : 1;
  const std::size_t rows = bytes / period;
  for (std::size_t col = 0; col < period; col += unit) {
    const CUdeviceptr p = ptr + col;
    if (unit == 4) {
      std::uint32_t v;
      std::memcpy(&v, pat + col, 4);
      r = cuMemsetD2D32Async(p, period, v, 1, rows, st);
    } else if (unit == 2) {
      std::uint16_t v;
      std::memcpy(&v, pat + col, 2);
      r = cuMemsetD2D16Async(p, period, v, 1, rows, st);
    } else {
      r = cuMemsetD2D8Async(p, period, pat[col], 1, rows, st);
    }
    if (r != CUDA_SUCCESS) return fail(r, "cuMemsetD2DAsync", "filling with a " + std::to_string(pattern_size) + "-byte pattern");
  }
  return Status::success();
}

plugin::Outcome pack_launch(CuKernel& kernel, const plugin::LaunchShape& shape, const plugin::KernelArg* args,
                            std::size_t count, PackedLaunch& out) noexcept {
  static const unsigned char tag = 0;  // value of a portable kernel's dynamic-local parameter
  out.shared = shape.local_bytes;
  if (count > PackedLaunch::max_params)
    return Status::failure(ErrorCategory::invalid_argument, "too many kernel arguments", "cuLaunchKernel");
  for (std::size_t i = 0; i < count; ++i) {
    const plugin::KernelArg& a = args[i];
    switch (a.kind) {
      case plugin::KernelArg::Kind::buffer:
        out.pointers[i] = (a.buffer && a.size != 0) ? ptr_of(*a.buffer, a.offset) : 0;
        out.params[i] = &out.pointers[i];
        break;
      case plugin::KernelArg::Kind::scalar:
        out.params[i] = const_cast<void*>(a.value);
        break;
      case plugin::KernelArg::Kind::local:
        // Only the core passes these: the dynamic local memory of a portable kernel, whose last
        // parameter is an empty tag; the bytes become the launch's dynamic shared memory.
        out.params[i] = const_cast<unsigned char*>(&tag);
        out.shared += a.size;
        break;
    }
  }
  if (out.shared > 48 * 1024) return kernel.allow_dynamic_shared(out.shared);
  return {};
}

plugin::Outcome CuQueue::launch(plugin::Kernel& kernel, const plugin::LaunchShape& shape,
                                const plugin::KernelArg* args, std::size_t count) noexcept {
  if (plugin::Outcome entered = enter_context(ctx_); !entered.ok()) return entered;
  CuKernel& k = static_cast<CuKernel&>(kernel);
  PackedLaunch p;
  if (plugin::Outcome packed = pack_launch(k, shape, args, count, p); !packed.ok()) return packed;
  const Dim3 g = shape.groups, b = shape.group_size;
  const CUresult r = cuLaunchKernel(k.function(), static_cast<unsigned>(g.x), static_cast<unsigned>(g.y),
                                    static_cast<unsigned>(g.z), static_cast<unsigned>(b.x),
                                    static_cast<unsigned>(b.y), static_cast<unsigned>(b.z),
                                    static_cast<unsigned>(p.shared), stream_, count ? p.params : nullptr, nullptr);
  if (r == CUDA_SUCCESS) return {};
  return fail(r, "cuLaunchKernel", "launching '" + k.info().name + "'");
}

Status CuQueue::record(bool timing, std::unique_ptr<plugin::Event>& out) noexcept {
  return guarded("cuEventRecord", [&] {
    Status s = make_current(ctx_);
    if (!s.ok()) return s;
    CUevent e = nullptr;
    CUresult r = cuEventCreate(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) return fail(r, "cuEventCreate");
    Owner<EventTraits> owned(e);
    r = cuEventRecord(e, stream_);
    if (r != CUDA_SUCCESS) return fail(r, "cuEventRecord");
    out = std::make_unique<CuEvent>(ctx_, std::move(owned));
    return Status::success();
  });
}

Status CuQueue::record_again(plugin::Event& event) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  const CUresult r = cuEventRecord(static_cast<CuEvent&>(event).handle(), stream_);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuEventRecord");
}

Status CuQueue::wait(plugin::Event& event) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  const CUresult r = cuStreamWaitEvent(stream_, static_cast<CuEvent&>(event).handle(), 0);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuStreamWaitEvent");
}

Status CuQueue::wait_gate(std::uint64_t& gate) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  std::lock_guard<std::mutex> lock(gate_mutex_);
  if (!gate_word_) {
    void* p = nullptr;
    CUresult r = cuMemHostAlloc(&p, sizeof(std::atomic<std::uint32_t>), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (r != CUDA_SUCCESS) return fail(r, "cuMemHostAlloc", "allocating a host-work gate");
    CUdeviceptr d = 0;
    r = cuMemHostGetDevicePointer(&d, p, 0);
    if (r != CUDA_SUCCESS) {
      (void)cuMemFreeHost(p);
      return fail(r, "cuMemHostGetDevicePointer", "mapping a host-work gate");
    }
    new (p) std::atomic<std::uint32_t>(0);
    gate_word_ = p;
    gate_device_ = d;
  }
  const std::uint32_t next = gates_made_ + 1;
  const CUresult r = cuStreamWaitValue32(stream_, gate_device_, next, CU_STREAM_WAIT_VALUE_GEQ);
  if (r == CUDA_ERROR_NOT_SUPPORTED)
    return Status::failure(ErrorCategory::unsupported, "this device cannot make a stream wait for host memory",
                           "cuStreamWaitValue32", r, "CUDA_ERROR_NOT_SUPPORTED");
  if (r != CUDA_SUCCESS) return fail(r, "cuStreamWaitValue32");
  gates_made_ = next;
  gate = next;
  return Status::success();
}

Status CuQueue::open_gate(std::uint64_t gate) noexcept {
  static_cast<std::atomic<std::uint32_t>*>(gate_word_)->store(static_cast<std::uint32_t>(gate), std::memory_order_release);
  return Status::success();
}

Status CuQueue::prefetch(plugin::Buffer& buffer, std::size_t offset, std::size_t bytes, bool to_host) noexcept {
  if (!device_.properties().shared_memory_concurrent)
    return Status::failure(ErrorCategory::unsupported,
                           "this device has no concurrent managed access, without which CUDA cannot prefetch",
                           "cuMemPrefetchAsync");
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  CUmemLocation where{};
  where.type = to_host ? CU_MEM_LOCATION_TYPE_HOST : CU_MEM_LOCATION_TYPE_DEVICE;
  where.id = to_host ? 0 : static_cast<int>(device_.native_device());
  const CUresult r = cuMemPrefetchAsync(ptr_of(buffer, offset), bytes, where, 0, stream_);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuMemPrefetchAsync");
}

Status CuQueue::finish() noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  const CUresult r = cuStreamSynchronize(stream_);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuStreamSynchronize");
}

Status CuEvent::wait() noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  const CUresult r = cuEventSynchronize(handle_);
  return r == CUDA_SUCCESS ? Status::success() : fail(r, "cuEventSynchronize");
}

Status CuEvent::query(bool& complete) noexcept {
  Status s = make_current(ctx_);
  if (!s.ok()) return s;
  const CUresult r = cuEventQuery(handle_);
  if (r == CUDA_SUCCESS || r == CUDA_ERROR_NOT_READY) {
    complete = r == CUDA_SUCCESS;
    return Status::success();
  }
  return fail(r, "cuEventQuery");
}

Status CuEvent::elapsed_ms(plugin::Event& end_event, double& ms) noexcept {
  CuEvent& end = static_cast<CuEvent&>(end_event);
  Status s = end.wait();
  if (!s.ok()) return s;
  s = wait();  // a start recorded on another, busier queue: cuEventElapsedTime would say CUDA_ERROR_NOT_READY
  if (!s.ok()) return s;
  float t = 0;
  const CUresult r = cuEventElapsedTime(&t, handle_, end.handle_);
  if (r != CUDA_SUCCESS) return fail(r, "cuEventElapsedTime");
  ms = t;
  return Status::success();
}

}  // namespace gpurt::cuda
