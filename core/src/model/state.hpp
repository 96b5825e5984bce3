// The core's private state behind the public handles, and the Status -> Error bridge.
// Only core/src and the core's unit tests include this.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <vector>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "gpurt/cache.hpp"
#include "gpurt/device.hpp"
#include "gpurt/error.hpp"
#include "model/bridge.hpp"
#include "model/host_ranges.hpp"
#include "gpurt/plugin/signature.hpp"
#include "gpurt/types.hpp"

namespace gpurt::detail {

struct BackendRecord;
class HostWorker;
class QueuePool;
class TransferEngine;

struct DeviceState {
  BackendRecord* backend = nullptr;
  bridge::Device* impl = nullptr;  // owned by the backend, lives as long as the process
  DeviceProperties props;
  std::string selector;     // "opencl:0"
  std::string description;  // "opencl:0 (name)"
  std::once_flag engine_once;
  std::shared_ptr<TransferEngine> engine;  // staged pageable copies, created on first use
  std::once_flag pool_once;
  std::shared_ptr<QueuePool> pool;  // Queue::alloc's memory (services/pool.hpp), created on first use
  // Held in Allocations now, plus allocations under way; Device::alloc refuses what would take
  // it past props.global_memory. Counted in `memory`: this device's own, or, for a Device imported
  // over a listed device's native device (import_device), the listed device's - one physical
  // memory, one count.
  std::atomic<std::uint64_t> live_bytes{0};
  std::atomic<std::uint64_t> live_buffers{0};
  DeviceState* memory = this;
  // Of live_bytes (on the device that owns the memory): what the queue pools of the devices on
  // this memory hold idle - this device's and, under sharers_mutex in `sharers`, those imported over
  // it - all released together when the memory runs short (services/pool.hpp).
  std::atomic<std::uint64_t> pooled_bytes{0};
  // Trims of those pools that released memory, counted once their frees are done: an allocation
  // that failed tries again when one came after its attempt, its own or another thread's.
  std::atomic<std::uint64_t> pool_releases{0};
  std::mutex sharers_mutex;
  std::vector<DeviceState*> sharers;  // devices imported over this one (they live for the process)
  // Held (on the device that owns the memory) from the free-memory check of a shared allocation to
  // its native call's return: two threads asking at once cannot pass the check together.
  std::mutex shared_mutex;
};

struct Allocation {
  DeviceState* device = nullptr;
  std::unique_ptr<bridge::Buffer> impl;  // null for zero-byte allocations
  std::size_t bytes = 0;
  bool counted = true;  // in the device's live_bytes (false for imported native buffers)
  void* host = nullptr;  // shared memory (Device::alloc_shared): where the host reaches its bytes
  // Its native handle, asked of the plugin once (it never changes while the allocation lives):
  // gpurt::native_handle of a buffer is a few field reads after the first (native.cpp), which the
  // kernel library's vendor calls make three times per matmul.
  mutable std::once_flag native_once;
  mutable std::uint64_t native_value = 0;
  mutable std::string native_type;
  Allocation() = default;
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;
  ~Allocation() {
    if (host) release_host_range(host);  // shared memory's host side
    if (impl && device && counted) {
      device->memory->live_bytes -= bytes;
      --device->memory->live_buffers;
    }
  }
};

struct HostAllocationState {
  DeviceState* device = nullptr;
  std::unique_ptr<bridge::HostAllocation> impl;
  bool read_only = false;  // a registration the device may only read: never a download's destination
  ~HostAllocationState();  // forgets the memory in the host-range registry (transfer.cpp)
};

// What host work threw (a host function, a completion callback), or why it could not run, oldest
// first: each is rethrown by one later finish or wait of its owner; what none reported is logged
// when the owner goes. Thread-safe.
struct KeptFailures {
  std::mutex mutex;
  std::deque<std::exception_ptr> list;
  // Keeps `failure` (logs it when there is no memory to keep it). Never throws.
  void keep(std::exception_ptr failure) noexcept;
  // Rethrows (and forgets) the oldest; returns when there is none.
  void rethrow_oldest();
  // At the owner's end: one error line per failure still kept, naming the owner (`name()`, a
  // std::string). Never throws.
  template <class Name>
  void log_unreported(const Name& name) noexcept {
    if (list.empty()) return;
    try {
      log_each(name());
    } catch (...) {
      // no memory for the lines
    }
  }
  void log_each(const std::string& owner);
};

struct QueueState {
  DeviceState* device = nullptr;
  std::unique_ptr<bridge::Queue> impl;
  bool timing = true;
  std::uint64_t trace_id = 0;  // its track in a trace (0: none yet)
  std::uint64_t id = 0;        // Queue::id(): numbered from 1 in creation order, never reused
  // Keeps a call that is several commands underneath contiguous on the queue - a staged copy (8 MiB
  // chunks), a copy relayed between devices, a fill (a backend may write one as several commands),
  // a graph replay: those hold it exclusively, every other enqueue shared, so no command another
  // thread enqueues on this queue lands between their commands (api-guide, "Threads").
  std::shared_mutex order;
  // Objects kept for the application (Queue::keep_until_finished, keep_until_destroyed), under
  // kept_mutex: `retained` goes at the next successful finish() that began after it was handed
  // over (each is numbered in the order handed over), `kept` with the queue.
  std::mutex kept_mutex;
  std::vector<std::pair<std::uint64_t, std::shared_ptr<const void>>> retained;
  std::uint64_t next_retained = 0;
  std::vector<std::shared_ptr<const void>> kept;
  // How many finishes have begun (taken their mark): the pool's tokens (services/pool.hpp) know
  // from it whether a finish began after them.
  std::atomic<std::uint64_t> finishes_begun{0};
  // Set when the queue goes without its work known to be complete (the destructor's finish
  // failed): the pool's tokens, released with `retained` all the same, then free no memory.
  std::shared_ptr<std::atomic<bool>> unfinished = std::make_shared<std::atomic<bool>>(false);
  // Queue::enqueue_host's thread (services/host_work.hpp), made on first use under host_mutex.
  std::mutex host_mutex;
  std::shared_ptr<HostWorker> host;
  // What its host functions threw, or why one could not run: rethrown by later finishes.
  KeptFailures failures;
  // Appends `object` to `retained` (throws std::bad_alloc).
  void retain(std::shared_ptr<const void> object);
  // Taken by a finish before it waits: it may release the objects handed over before this mark.
  std::uint64_t retained_mark();
  // After a successful finish that took `mark`: releases (outside the lock) the objects handed over
  // before it; the ones handed over since - for work the finish may not have waited for - stay.
  // Never throws.
  void release_retained(std::uint64_t mark) noexcept;
  // Waits for the queue's work before the kept objects and the native queue go (never throws);
  // the members are destroyed in reverse order, so `kept` and `retained` go before `impl`.
  // Host functions still queued run first (their thread ends here).
  ~QueueState() {
    host.reset();
    if (impl && (!retained.empty() || !kept.empty()) && !impl->finish().ok()) *unfinished = true;
    failures.log_unreported([&] { return "queue " + std::to_string(id); });
  }
};

struct EventState {
  DeviceState* device = nullptr;
  std::unique_ptr<bridge::Event> impl;
  bool timing = false;
  bool imported = false;  // made by import_event from a native event, not recorded by gpurt
  // What its on_complete callbacks threw, or why one could not run: rethrown by later waits.
  KeptFailures failures;
  ~EventState() {
    failures.log_unreported([&] { return "an event of " + (device ? device->selector : std::string("no device")); });
  }
};

struct ProgramState {
  DeviceState* device = nullptr;
  std::unique_ptr<bridge::Program> impl;
  SourceLanguage language = SourceLanguage::portable;
  std::map<std::string, std::vector<plugin::KernelDecl>> signatures;  // detail::kernel_signatures
  BuildInfo build_info;
};

struct KernelState {
  DeviceState* device = nullptr;
  std::shared_ptr<ProgramState> program;  // keeps the native program alive
  std::unique_ptr<bridge::Kernel> impl;
  bridge::KernelInfo info;
  // What each parameter holds, read from its spelling (info.params[i].type_name); empty when the
  // parameters are not known. Checked against each argument's host type at launch.
  std::vector<plugin::ParamType> types;
  std::size_t view_alignment = 1;  // a buffer view passed to this kernel must start on it (bytes)
};

// Throws the Error a failed Status describes, naming the device.
[[noreturn]] void raise(const bridge::Status& status, const DeviceState* device);
inline void check(const bridge::Status& status, const DeviceState* device) {
  if (status.failed) raise(status, device);
}
// Throws Error(invalid_argument) naming the call and, when given, the device.
[[noreturn]] void invalid(const std::string& message, const char* call,
                          const DeviceState* device = nullptr);

DeviceState* checked_device(const Device& d, const char* call);
// The next Queue::id (from 1, never reused).
std::uint64_t next_queue_id();
// A new queue of `device`, numbered by next_queue_id: what Device::create_queue returns, and the
// queues the services run their own work on. Throws the backend's Error when it cannot be made.
std::shared_ptr<QueueState> make_queue(DeviceState* device, bool timing);
// `bytes` of device memory on `d` (zero: an allocation without a native one), counted in its
// live_bytes: what Device::alloc and the queue pool allocate; throws out_of_device_memory (naming
// `call`) past the device's memory or the largest allocation, after releasing the pool's idle blocks.
// `shared`: shared memory (Device::alloc_shared), refused as unsupported where the device has none
// and as out_of_device_memory past the driver's free memory, before the driver sees it.
std::unique_ptr<Allocation> allocate_block(DeviceState* d, std::size_t bytes, const char* call, bool shared = false);
// Throws invalid_argument unless [offset, offset + bytes) lies inside `a`.
void check_range(const Allocation* a, std::size_t offset, std::size_t bytes, const char* call);
[[noreturn]] void throw_empty_handle(const char* what, const char* call);
// What an exception says (what(), or that it is of another type), for a log line. Never throws.
std::string describe(const std::exception_ptr& failure) noexcept;

}  // namespace gpurt::detail
