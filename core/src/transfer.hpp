// The transfer engine (see gpurt/transfer.hpp): one per device, created on first use.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "state.hpp"

namespace gpurt::detail {

// memcpy whose stores bypass the caches (x86-64; plain memcpy elsewhere), fenced before it returns.
void stream_copy(void* dst, const void* src, std::size_t bytes) noexcept;

// Copies `bytes` with up to `threads` host threads.
class CopyPool {
 public:
  explicit CopyPool(unsigned threads);
  ~CopyPool();
  void copy(void* dst, const void* src, std::size_t bytes);

 private:
  void worker();
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::vector<std::function<void()>> tasks_;
  std::size_t pending_ = 0;
  bool stop_ = false;
};

class TransferEngine {
 public:
  explicit TransferEngine(DeviceState* device);
  ~TransferEngine();
  // Both return false, doing nothing, when the copy should take the direct path.
  bool upload(QueueState* q, const void* src, plugin::Buffer& dst, std::size_t offset, std::size_t bytes);
  bool download(QueueState* q, plugin::Buffer& src, std::size_t offset, void* dst, std::size_t bytes);

  static constexpr std::size_t chunk = 8u << 20;
  static constexpr std::size_t depth = 3;

 private:
  struct Slot {
    std::unique_ptr<plugin::HostAllocation> memory;
    std::unique_ptr<plugin::Event> in_use;  // completes when the slot's last DMA has
  };
  bool worth_staging(int direction, std::size_t bytes);
  void staged_upload(QueueState* q, const void* src, plugin::Buffer& dst, std::size_t offset, std::size_t bytes);
  void staged_download(QueueState* q, plugin::Buffer& src, std::size_t offset, void* dst, std::size_t bytes);
  std::size_t measure_cutover(int direction);
  std::vector<Slot> acquire();
  void release(std::vector<Slot> slots);

  // The copy pool of a direction (0 uploads, 1 downloads: each has its own thread count), rebuilt
  // when set_staging_threads changes it; a copy in progress keeps the pool it started with.
  std::shared_ptr<CopyPool> pool(int direction);

  DeviceState* device_;
  std::mutex mutex_;
  std::shared_ptr<CopyPool> pool_[2];
  unsigned pool_threads_[2] = {0, 0};
  std::vector<Slot> free_;
  std::once_flag measured_[2];
  std::size_t cutover_[2] = {0, 0};  // bytes from which staging pays; SIZE_MAX: never
};

// Whether a copy of `bytes` through a raw host pointer might be staged at all (a cheap test done
// before anything else on the copy path).
bool may_stage(std::size_t bytes) noexcept;

// The device's engine, created on first use.
TransferEngine& transfer_engine(DeviceState* device);
// Counts a pageable copy that went direct.
void count_direct_copy();

// Host memory gpurt allocated pinned (HostBuffer), so that a raw pointer into it is recognised and
// never staged.
void register_pinned(const void* p, std::size_t bytes);
void unregister_pinned(const void* p);
bool is_pinned(const void* p, std::size_t bytes);

}  // namespace gpurt::detail
