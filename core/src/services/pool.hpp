// The device memory pool behind Queue::alloc: a buffer whose last handle goes returns its memory
// here, and later Queue::alloc calls take it again without a driver call.
//
// Safety rests on queue order, as CUDA's stream-ordered allocator's does: memory given back on
// queue A ("after A's work so far") may be taken at once by A's later work, which runs after
// everything A had before; by another queue only once a finish of A that began after the give-back
// has completed (a token in A's retained objects, QueueState::retain, says so when that finish
// releases it). Work on other queues that used the memory must be ordered before the give-back by
// the application (events), as the docs say.
//
// Blocks are sized in classes (512 bytes, then 4, 5, 6 or 7 x a power of two: at most a quarter
// more than asked) and stay counted in the device's live_bytes while the pool holds them, so the
// accounting and out_of_device_memory see them; an allocation that would fail for want of memory
// first releases every idle block (Device::alloc too) and tries again. Devices imported over one
// native device share its memory and its count but keep a pool each (their memory belongs to
// their own contexts): running short releases the idle blocks of all of them, and pooled_bytes
// counts them all, on the device that owns the memory.
//
// A queue that goes while its work may still run (its destructor's finish failed) never settles
// its tokens: what it gave back stays idle, for that queue alone, until a trim frees it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "model/state.hpp"

namespace gpurt::detail {

class QueuePool {
 public:
  explicit QueuePool(DeviceState* device) : device_(device) {}
  QueuePool(const QueuePool&) = delete;
  QueuePool& operator=(const QueuePool&) = delete;

  // At least `bytes` (> 0) of device memory for work on `queue`: a block given back earlier that
  // `queue` may use, else a new allocation. Throws what Device::alloc throws, naming `call`.
  std::shared_ptr<Allocation> take(const std::shared_ptr<QueueState>& queue, std::size_t bytes, const char* call);
  // Releases every idle block to the driver (which may wait for the device, as freeing does);
  // returns the bytes released. A trim that another thread began is waited for, so the memory it
  // releases is back in the count when this returns. Never throws.
  std::uint64_t trim() noexcept;

  // The size class of `bytes`: what a block for it holds.
  static std::size_t size_class(std::size_t bytes) noexcept;

 private:
  // Whether a finish of the block's queue that began after the give-back has completed.
  struct Settled {
    std::atomic<bool> value{false};
  };
  struct Block {
    std::unique_ptr<Allocation> allocation;
    std::uint64_t queue_id = 0;  // the queue it was given back on
    std::shared_ptr<Settled> settled;
  };
  // The token of a queue's current finish epoch (no finish has begun since it was handed over).
  struct Epoch {
    std::shared_ptr<Settled> settled;
    std::uint64_t finishes_begun = 0;
    std::shared_ptr<const std::atomic<bool>> unfinished;  // the queue's: set, the epoch never settles
  };
  struct GiveBack;  // the deleter of the buffers' shared_ptr<Allocation>

  void give_back(Allocation* allocation, const std::weak_ptr<QueueState>& queue) noexcept;
  std::shared_ptr<Settled> epoch_of(QueueState& queue);  // under mutex_
  void sweep_epochs() noexcept;                           // under mutex_: forgets the settled epochs

  DeviceState* device_;
  std::mutex trim_mutex_;  // held through a trim, the frees included
  std::mutex mutex_;
  std::map<std::size_t, std::vector<Block>> idle_;  // by size class, oldest first
  std::map<std::uint64_t, Epoch> epochs_;           // by queue id
};

// The device's pool (made on first use).
QueuePool& queue_pool(DeviceState* device);
// Releases every idle block of the pools on `device`'s memory: its own pool's, the pool of the
// device that owns the memory and those of the devices imported over it. The bytes released;
// waits for trims other threads began. Never throws.
std::uint64_t trim_queue_pools(DeviceState* device) noexcept;
// What those pools hold idle now: at most what gpurt holds on the memory (memory_usage()).
std::uint64_t pooled_bytes(const DeviceState* device) noexcept;

}  // namespace gpurt::detail
