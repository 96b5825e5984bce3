// gpurt::Device and memory allocation.
#include "gpurt/device.hpp"

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <string>

#include "api/format.hpp"
#include "gpurt/buffer.hpp"
#include "gpurt/plugin/abi.h"
#include "gpurt/program.hpp"
#include "gpurt/queue.hpp"
#include "model/host_ranges.hpp"
#include "model/state.hpp"
#include "services/pool.hpp"
#include "services/trace.hpp"
#include "services/transfer.hpp"

namespace gpurt {

const DeviceProperties& Device::properties() const {
  return detail::checked_device(*this, "Device::properties")->props;
}

std::string Device::selector() const { return detail::checked_device(*this, "Device::selector")->selector; }

std::string Device::description() const {
  return detail::checked_device(*this, "Device::description")->description;
}


Queue Device::create_queue(QueueOptions options) const {
  detail::DeviceState* d = detail::checked_device(*this, "Device::create_queue");
  return detail::Access::make<Queue>(detail::make_queue(d, options.timing == QueueOptions::Timing::enabled));
}

MemoryUsage Device::memory_usage() const {
  detail::DeviceState* d = detail::checked_device(*this, "Device::memory_usage");
  MemoryUsage m;
  const bridge::Status s = d->impl->memory_usage(m.free_bytes, m.total_bytes);
  if (!s.ok() && s.category == ErrorCategory::unsupported) {
    m.free_known = false;
    m.free_bytes = 0;
    m.total_bytes = d->props.global_memory;
  } else {
    detail::check(s, d);
  }
  m.gpurt_bytes = d->memory->live_bytes;
  m.gpurt_buffers = d->memory->live_buffers;
  m.pooled_bytes = detail::pooled_bytes(d);
  return m;
}

std::uint64_t Device::trim_pool() const {
  return detail::trim_queue_pools(detail::checked_device(*this, "Device::trim_pool"));
}

namespace detail {

namespace {
std::size_t checked_bytes(std::size_t count, std::size_t elem_size, const char* call,
                          const DeviceState* d) {
  if (elem_size != 0 && count > std::numeric_limits<std::size_t>::max() / elem_size)
    invalid(std::to_string(count) + " elements of " + std::to_string(elem_size) +
                " bytes overflow the address space; ask for fewer elements",
            call, d);
  return count * elem_size;
}
}  // namespace

namespace {
// Shared memory that the device cannot give, refused before the driver sees it: over-asking for
// managed memory can hang an NVIDIA GPU for every process on it.
void check_shared(DeviceState* d, std::size_t bytes, const char* call) {
  auto refuse = [&](ErrorCategory category, const std::string& message) {
    ErrorDetails det;
    det.backend = d->props.backend;
    det.device = d->description;
    det.call = call;
    throw Error(category, message, std::move(det));
  };
  if (!d->props.shared_memory)
    refuse(ErrorCategory::unsupported,
           d->selector + " (" + d->props.name +
               ") has no shared memory (properties().shared_memory is false: it needs CUDA managed memory or "
               "OpenCL buffer SVM); allocate with Device::alloc and copy, or use a device whose "
               "properties().shared_memory is true");
  std::uint64_t free_bytes = 0, total = 0;
  bridge::Status s = d->impl->memory_usage(free_bytes, total);
  // Memory Queue::alloc buffers gave back is released first when it is in the way.
  if (s.ok() && bytes > free_bytes && trim_queue_pools(d) > 0) s = d->impl->memory_usage(free_bytes, total);
  if (s.ok() && bytes > free_bytes)
    refuse(ErrorCategory::out_of_device_memory,
           "cannot allocate " + format_bytes(bytes) + " of shared memory: " + d->selector + " has " +
               format_bytes(free_bytes) + " free, and asking for more than is free can hang the GPU; allocate less");
}
}  // namespace

std::unique_ptr<Allocation> allocate_block(DeviceState* d, std::size_t bytes, const char* call, bool shared) {
  std::unique_lock<std::mutex> shared_lock;
  if (shared) {
    shared_lock = std::unique_lock<std::mutex>(d->memory->shared_mutex);
    check_shared(d, bytes, call);
  }
  auto a = std::make_unique<Allocation>();
  a->device = d;
  a->bytes = bytes;
  if (bytes == 0) return a;
  Traced trace("alloc", nullptr, bytes, nullptr, d);
  if (bytes > d->props.max_allocation) {
    ErrorDetails det;
    det.backend = d->props.backend;
    det.device = d->description;
    det.call = call;
    throw Error(ErrorCategory::out_of_device_memory,
                "cannot allocate " + format_bytes(bytes) + ": the largest single allocation " +
                    d->selector + " allows is " + format_bytes(d->props.max_allocation) +
                    " (device memory " + format_bytes(d->props.global_memory) +
                    "); split the data into several buffers",
                std::move(det));
  }
  // What gpurt holds on the device counts against its memory on every backend. Drivers that
  // over-commit (PoCL hands out more than the host has and the process dies at first touch) are
  // held to the device's size this way; on GPUs the driver would refuse anyway. The bytes are
  // reserved before the native call, so threads allocating at once cannot pass the limit together.
  // Memory that Queue::alloc buffers gave back and none uses is released first when it is in the
  // way (of the limit, or of the driver).
  DeviceState* m = d->memory;
  // A refusal is tried again when pool memory came back after the attempt: released by this
  // thread's trim, or by another thread's (a trim waits for one under way to finish its frees).
  std::uint64_t releases = m->pool_releases.load();
  std::uint64_t held = m->live_bytes.fetch_add(bytes);
  if (held + bytes > d->props.global_memory) {
    m->live_bytes -= bytes;
    const bool released = trim_queue_pools(d) > 0 || m->pool_releases.load() != releases;
    if (released) held = m->live_bytes.fetch_add(bytes);
    if (!released || held + bytes > d->props.global_memory) {
      if (released) m->live_bytes -= bytes;
      ErrorDetails det;
      det.backend = d->props.backend;
      det.device = d->description;
      det.call = call;
      throw Error(ErrorCategory::out_of_device_memory,
                  "cannot allocate " + format_bytes(bytes) + ": gpurt already holds " + format_bytes(held) +
                      " in " + std::to_string(m->live_buffers.load()) + " buffers on " + d->selector +
                      ", whose memory is " + format_bytes(d->props.global_memory) +
                      "; free buffers (drop their last handles) or allocate less",
                  std::move(det));
    }
  }
  releases = m->pool_releases.load();
  auto native = [&] { return shared ? d->impl->allocate_shared(bytes, a->impl, a->host) : d->impl->allocate(bytes, a->impl); };
  bridge::Status s = native();
  if (!s.ok() && s.category == ErrorCategory::out_of_device_memory &&
      (trim_queue_pools(d) > 0 || m->pool_releases.load() != releases)) {
    a->impl.reset();
    s = native();
  }
  if (!s.ok()) {
    a->impl.reset();  // a plugin sets it only on success; the reservation is returned here
    a->host = nullptr;
    m->live_bytes -= bytes;
    raise(s, d);
  }
  ++m->live_buffers;
  if (a->host) add_host_range(a->host, bytes, HostMemory::shared);
  // A buffer a staged copy could fill: the transfer engine sets itself up in the background now,
  // while the program prepares its data, rather than inside its first copy.
  if (may_stage(bytes)) transfer_engine(d).prepare();
  return a;
}

std::shared_ptr<Allocation> allocate(const Device& device, std::size_t count, std::size_t elem_size) {
  DeviceState* d = checked_device(device, "Device::alloc");
  return allocate_block(d, checked_bytes(count, elem_size, "Device::alloc", d), "Device::alloc");
}

std::shared_ptr<Allocation> allocate_shared(const Device& device, std::size_t count, std::size_t elem_size) {
  constexpr const char* call = "Device::alloc_shared";
  DeviceState* d = checked_device(device, call);
  return allocate_block(d, checked_bytes(count, elem_size, call, d), call, true);
}

void* shared_host(const Allocation* a, std::size_t offset_bytes) {
  if (!a->host && a->bytes > 0)
    invalid("the buffer is not shared memory (made by Device::alloc or Queue::alloc, not Device::alloc_shared), so the "
            "host cannot reach it; copy it to the host, or allocate it with Device::alloc_shared",
            "Buffer::host_data", a->device);
  return a->host ? static_cast<unsigned char*>(a->host) + offset_bytes : nullptr;
}

bool is_shared(const Allocation* a) noexcept { return a->host != nullptr; }

// Access advice (device.hpp): checked here, taken (or not) by the backend.
bool advise(const Device& device, const Allocation* a, std::size_t offset, std::size_t bytes, MemoryAdvice advice,
            bool set) {
  constexpr const char* call = "Device::advise";
  DeviceState* d = checked_device(device, call);
  if (!a) throw_empty_handle("Buffer", call);
  if (a->device != d)
    invalid("the buffer is of " + a->device->description + ", not of this device; advise its own device", call, d);
  if (a->bytes > 0 && !a->host)
    invalid("the buffer is not shared memory (Device::alloc or Queue::alloc, not Device::alloc_shared): advice is for "
            "shared memory only",
            call, d);
  std::uint32_t native = 0;
  switch (advice) {
    case MemoryAdvice::read_mostly: native = GPURT_ADVICE_READ_MOSTLY; break;
    case MemoryAdvice::prefer_device: native = GPURT_ADVICE_PREFER_DEVICE; break;
    case MemoryAdvice::prefer_host: native = GPURT_ADVICE_PREFER_HOST; break;
    case MemoryAdvice::accessed_by_device: native = GPURT_ADVICE_ACCESSED_BY_DEVICE; break;
    default:
      invalid("advice " + std::to_string(static_cast<long long>(advice)) +
                  " is not a gpurt::MemoryAdvice (read_mostly, prefer_device, prefer_host, accessed_by_device)",
              call, d);
  }
  check_range(a, offset, bytes, call);
  if (bytes == 0) return true;
  const bridge::Status s = d->impl->advise(*a->impl, offset, bytes, native, set);
  if (!s.ok() && s.category == ErrorCategory::unsupported) return false;  // no such advice here: not taken
  check(s, d);
  return true;
}

std::shared_ptr<HostAllocationState> allocate_host(const Device& device, std::size_t count,
                                                   std::size_t elem_size, void** data) {
  DeviceState* d = checked_device(device, "Device::alloc_host");
  const std::size_t bytes = checked_bytes(count, elem_size, "Device::alloc_host", d);
  auto h = std::make_shared<HostAllocationState>();
  h->device = d;
  *data = nullptr;
  if (bytes == 0) return h;
  check(d->impl->allocate_host(bytes, h->impl), d);
  *data = h->impl->data();
  add_host_range(*data, bytes, HostMemory::pinned);
  return h;
}

std::shared_ptr<HostAllocationState> register_host(const Device& device, void* ptr, std::size_t count,
                                                   std::size_t elem_size, bool read_only) {
  constexpr const char* call = "Device::register_host";
  DeviceState* d = checked_device(device, call);
  const std::size_t bytes = checked_bytes(count, elem_size, call, d);
  auto h = std::make_shared<HostAllocationState>();
  h->device = d;
  if (bytes == 0) return h;
  if (!ptr) invalid("the pointer is null for " + std::to_string(bytes) + " bytes; pass the memory to register", call, d);
  if (reinterpret_cast<std::uintptr_t>(ptr) > UINTPTR_MAX - bytes)
    invalid("the range of " + std::to_string(bytes) + " bytes runs past the end of the address space", call, d);
  const std::string range = "[" + std::to_string(reinterpret_cast<std::uintptr_t>(ptr)) + ", +" + std::to_string(bytes) + ")";
  auto overlapping = [&] {
    invalid(range + " overlaps memory that is registered already, a HostBuffer or shared memory; register each "
                "range once (a registration covers every copy inside it), or let the earlier registration go first",
            call, d);
  };
  // The range is claimed before the driver pins it, in one step with the overlap check (of two
  // threads registering overlapping ranges at once, one is refused), and given back if the driver
  // refuses; copies see it as pinned only once it is (the claim is recorded as pageable first).
  if (!claim_host_range(ptr, bytes, HostMemory::pageable)) overlapping();
  struct Claim {
    void* p;
    bool kept = false;
    ~Claim() {
      if (!kept) release_host_range(p);
    }
  } claim{ptr};
  bool registered_read_only = read_only;
  const bridge::Status s = d->impl->register_host(ptr, bytes, registered_read_only, h->impl);
  if (!s.ok() && s.category == ErrorCategory::unsupported) {
    ErrorDetails det;
    det.backend = d->props.backend;
    det.device = d->description;
    det.call = call;
    throw Error(ErrorCategory::unsupported,
                d->selector + " (" + d->props.name + ") cannot register host memory (" + s.message +
                    "); copy through a HostBuffer (Device::alloc_host) instead, or from the memory as it is",
                std::move(det));
  }
  check(s, d);
  h->read_only = registered_read_only;
  add_host_range(ptr, bytes, registered_read_only ? HostMemory::pinned_read_only : HostMemory::pinned);
  claim.kept = true;
  return h;
}

Device allocation_device(const Allocation* a) { return Access::make<Device>(a->device); }


void check_view(const Allocation* a, std::size_t offset_bytes, std::size_t view_bytes,
                std::size_t offset, std::size_t count, std::size_t elem_size) {
  const std::size_t size = view_bytes / elem_size;
  if (offset > size || count > size - offset)
    invalid("view [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                std::to_string(count) + ") is outside the buffer's " + std::to_string(size) +
                " elements; a view must lie inside the buffer it is taken from",
            "Buffer::view", a->device);
  (void)offset_bytes;
}

void check_host_view(std::size_t size, std::size_t offset, std::size_t count) {
  if (offset > size || count > size - offset)
    invalid("view [" + std::to_string(offset) + ", " + std::to_string(offset) + " + " +
                std::to_string(count) + ") is outside the HostBuffer's " + std::to_string(size) +
                " elements; a view must lie inside the HostBuffer it is taken from",
            "HostBuffer::view");
}

void check_reinterpret(std::size_t offset_bytes, std::size_t bytes, std::size_t from_size,
                       std::size_t to_size, std::size_t to_align) {
  if (bytes % to_size != 0)
    invalid("a view of " + std::to_string(bytes) + " bytes cannot be seen as elements of " +
                std::to_string(to_size) + " bytes (it does not divide evenly); take a view whose size fits",
            "Buffer::as");
  if (offset_bytes % to_align != 0)
    invalid("the view starts at byte " + std::to_string(offset_bytes) +
                ", which is not aligned for elements needing " + std::to_string(to_align) +
                "-byte alignment",
            "Buffer::as");
  (void)from_size;
}

}  // namespace detail
}  // namespace gpurt
