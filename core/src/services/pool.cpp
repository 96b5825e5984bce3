// The queue pool (pool.hpp).
#include "services/pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

namespace gpurt::detail {

// Runs when a Queue::alloc buffer's last handle goes: the memory goes back to the pool, ordered
// after `queue`'s work so far.
struct QueuePool::GiveBack {
  QueuePool* pool;
  std::weak_ptr<QueueState> queue;
  void operator()(Allocation* allocation) const noexcept { pool->give_back(allocation, queue); }
};

std::size_t QueuePool::size_class(std::size_t bytes) noexcept {
  if (bytes <= 512) return 512;
  // 4, 5, 6 or 7 x 2^k: the least such size at or above `bytes`.
  std::size_t step = 128;  // 2^k of the class 4 x 2^k = 512
  while (bytes > 7 * step) {
    if (step > std::numeric_limits<std::size_t>::max() / 16) return bytes;  // no class above: the size itself
    step *= 2;
  }
  const std::size_t units = (bytes + step - 1) / step;  // 4 ... 7 (or 8 = 4 x the next step)
  return units * step;
}

std::shared_ptr<QueuePool::Settled> QueuePool::epoch_of(QueueState& queue) {
  const std::uint64_t begun = queue.finishes_begun.load();
  if (epochs_.size() >= 64) sweep_epochs();  // queues come and go: forget the settled ones
  const auto it = epochs_.find(queue.id);
  if (it != epochs_.end() && it->second.finishes_begun == begun && !it->second.settled->value.load())
    return it->second.settled;
  auto settled = std::make_shared<Settled>();
  // The token: released by the first finish of `queue` that begins after this (or with the queue,
  // which then waits for its work), it marks the epoch's blocks free for every queue - unless the
  // queue went with its work unfinished.
  std::shared_ptr<std::atomic<bool>> unfinished = queue.unfinished;
  queue.retain(std::shared_ptr<const void>(nullptr, [settled, unfinished](const void*) noexcept {
    if (!unfinished->load()) settled->value = true;
  }));
  // Recorded only once made: a failed allocation here leaves no entry without a token.
  if (it != epochs_.end())
    it->second = Epoch{settled, begun, unfinished};
  else
    epochs_.emplace(queue.id, Epoch{settled, begun, unfinished});
  return settled;
}

void QueuePool::give_back(Allocation* allocation, const std::weak_ptr<QueueState>& queue) noexcept {
  std::unique_ptr<Allocation> owned(allocation);
  const std::shared_ptr<QueueState> q = queue.lock();
  if (!q) return;  // the queue is gone and its work may still run: freed the way Device::alloc's memory is
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    Block b{nullptr, q->id, epoch_of(*q)};
    std::vector<Block>& list = idle_[owned->bytes];
    list.reserve(list.size() + 1);
    const std::uint64_t bytes = owned->bytes;
    b.allocation = std::move(owned);
    list.push_back(std::move(b));
    device_->memory->pooled_bytes += bytes;
  } catch (...) {
    // No host memory for the records: the memory is freed now instead (`owned`, if still held).
  }
  // `q` may be the last handle of the queue: it goes here, outside the lock.
}

std::shared_ptr<Allocation> QueuePool::take(const std::shared_ptr<QueueState>& queue, std::size_t bytes,
                                            const char* call) {
  // Rounded up only where the class fits what Device::alloc would give: a request near the largest
  // allocation or the device's memory is taken at its own size (and refused as Device::alloc
  // refuses it, naming the size asked for).
  std::size_t size = size_class(bytes);
  if (size > device_->props.max_allocation || size > device_->props.global_memory / 2) size = bytes;
  std::unique_ptr<Allocation> found;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = idle_.find(size);
    if (it != idle_.end()) {
      std::vector<Block>& list = it->second;
      // The newest usable block (the likeliest to be in the caches): one this queue gave back, or
      // one whose queue has finished since.
      for (std::size_t i = list.size(); i-- > 0;) {
        if (list[i].queue_id == queue->id || list[i].settled->value.load()) {
          found = std::move(list[i].allocation);
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
          device_->memory->pooled_bytes -= size;
          break;
        }
      }
    }
  }
  if (!found) found = allocate_block(device_, size, call);
  return std::shared_ptr<Allocation>(found.release(), GiveBack{this, queue});
}

std::uint64_t QueuePool::trim() noexcept {
  // Held through the frees: a thread that finds nothing to release while another's trim is still
  // freeing waits for it, and then sees the memory back in live_bytes.
  std::lock_guard<std::mutex> trimming(trim_mutex_);
  std::map<std::size_t, std::vector<Block>> released;
  std::uint64_t bytes = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    released.swap(idle_);
    for (const auto& [size, list] : released) bytes += static_cast<std::uint64_t>(size) * list.size();
    device_->memory->pooled_bytes -= bytes;
    sweep_epochs();
  }
  released.clear();  // outside the lock: the frees may wait for the device
  if (bytes > 0) ++device_->memory->pool_releases;
  return bytes;
}

void QueuePool::sweep_epochs() noexcept {
  // Forgotten too: the epochs of queues that went unfinished, which never settle.
  for (auto it = epochs_.begin(); it != epochs_.end();) {
    const Epoch& e = it->second;
    const bool over = !e.settled || e.settled->value.load() || (e.unfinished && e.unfinished->load());
    it = over ? epochs_.erase(it) : std::next(it);
  }
}

QueuePool& queue_pool(DeviceState* device) {
  std::call_once(device->pool_once, [&] { device->pool = std::make_shared<QueuePool>(device); });
  return *device->pool;
}

namespace {
// The device's pool, made if need be; null when it cannot be made (no host memory).
QueuePool* pool_of(DeviceState* device) noexcept {
  // The pool is made under pool_once; reading the pointer unguarded would race with its creation.
  try {
    return &queue_pool(device);
  } catch (...) {
    return nullptr;
  }
}
}  // namespace

std::uint64_t trim_queue_pools(DeviceState* device) noexcept {
  DeviceState* owner = device->memory;
  std::vector<DeviceState*> devices;
  try {
    std::lock_guard<std::mutex> lock(owner->sharers_mutex);
    devices.reserve(owner->sharers.size() + 1);
    devices.push_back(owner);
    devices.insert(devices.end(), owner->sharers.begin(), owner->sharers.end());
  } catch (...) {
    devices.clear();  // no memory for the list: this device's own pool at least
  }
  if (devices.empty()) {
    QueuePool* pool = pool_of(device);
    return pool ? pool->trim() : 0;
  }
  std::uint64_t bytes = 0;
  for (DeviceState* d : devices)
    if (QueuePool* pool = pool_of(d)) bytes += pool->trim();
  return bytes;
}

std::uint64_t pooled_bytes(const DeviceState* device) noexcept {
  // Two counts read one after the other: a block given back (or trimmed) between the reads could
  // make the pool's the larger, which at any one moment it never is.
  const std::uint64_t live = device->memory->live_bytes.load();
  return std::min(device->memory->pooled_bytes.load(), live);
}

}  // namespace gpurt::detail
