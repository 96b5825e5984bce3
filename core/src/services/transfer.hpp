// The transfer engine (see gpurt/transfer.hpp): one per device, created on first use.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "model/state.hpp"

namespace gpurt::detail {

// memcpy whose stores bypass the caches (x86-64; plain memcpy elsewhere), fenced before it returns.
void stream_copy(void* dst, const void* src, std::size_t bytes) noexcept;

// A callable taken by reference, never copied: what std::function would allocate for a lambda
// that captures more than two pointers (every chunk of a staged copy passes one) costs nothing
// here. The callable must outlive the call it is passed to; one made from nullptr is empty.
template <class Signature>
class FunctionRef;
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  FunctionRef(std::nullptr_t = nullptr) noexcept {}
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef>>>
  FunctionRef(F&& f) noexcept  // NOLINT: converts like std::function
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, Args... a) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(o))(std::forward<Args>(a)...);
        }) {}
  R operator()(Args... a) const { return call_(object_, std::forward<Args>(a)...); }
  explicit operator bool() const noexcept { return call_ != nullptr; }

 private:
  void* object_ = nullptr;
  R (*call_)(void*, Args...) = nullptr;
};

// Host threads for the staged copies' memcpy: `threads` in all, the calling thread one of them.
// Several callers (queues on other threads) may share one pool; each waits only for its own work.
class CopyPool {
 public:
  explicit CopyPool(unsigned threads);
  ~CopyPool();
  // Runs body(0) .. body(tasks - 1), taken in index order by whichever of the pool's threads and
  // the calling thread is free, and returns once all of them have run. With a gate, the calling
  // thread first calls gate(i) for each i in turn and hands task i on only once it returns true;
  // on false, task i and those after it do not run. body and gate must not throw.
  void run(std::size_t tasks, FunctionRef<void(std::size_t)> body, FunctionRef<bool(std::size_t)> gate = nullptr);
  // Copies `bytes`, cut into parts of at least 512 KiB, one per thread at most.
  void copy(void* dst, const void* src, std::size_t bytes);
  unsigned threads() const { return static_cast<unsigned>(threads_.size()) + 1; }

 private:
  struct Batch {
    FunctionRef<void(std::size_t)> body;
    std::size_t left;  // tasks not yet finished
  };
  struct Task {
    Batch* batch;
    std::size_t index;
  };
  void worker();
  void run_next(std::unique_lock<std::mutex>& lock);  // the first queued task; lock held on entry and exit
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Task> tasks_;
  bool stop_ = false;
};

class TransferEngine {
 public:
  explicit TransferEngine(DeviceState* device);
  ~TransferEngine();
  // Both return false, doing nothing, when the copy should take the direct path.
  bool upload(QueueState* q, const void* src, bridge::Buffer& dst, std::size_t offset, std::size_t bytes);
  bool download(QueueState* q, bridge::Buffer& src, std::size_t offset, void* dst, std::size_t bytes);

  static constexpr std::size_t chunk = 8u << 20;
  static constexpr std::size_t depth = 3;

  // A copy from this device's buffer `src` to `dst`, a buffer of another device that no direct
  // (peer) copy reaches: relayed through two pinned buffers of this device, 32 MiB at most each -
  // chunk c + 1 is downloaded on `sq` (a queue of this device) while chunk c is uploaded on `dq`
  // (a queue of dst's device) through that device's own staging. Returns once the data has
  // landed in `dst` (dq finished); throws Error on failure, with no DMA left pending into the relay.
  void relay(QueueState* sq, bridge::Buffer& src, std::size_t src_offset, QueueState* dq, bridge::Buffer& dst,
             std::size_t dst_offset, std::size_t bytes);
  // Sets up, once and on a thread of its own, what a staged copy needs: the device's measurement
  // (loaded, or the background measurement started), the copy threads of both directions and the
  // pinned staging buffers. Called when a buffer a staged copy could fill is allocated, so that
  // the set-up overlaps what the program does before its first copy; a copy that comes while it
  // runs waits for it rather than doing it twice. Never throws (a failure is logged; the first
  // copy then sets up what is missing itself).
  void prepare() noexcept;
  // A queue of this device for the engine's own work (relays), made on first use.
  QueueState* internal_queue();
  static constexpr std::size_t relay_chunk = 32u << 20;
  // Thrown inside a measurement that is stopping (process exit) or that user copies kept disturbing.
  struct Interrupted {};

 private:
  struct Slot {
    std::unique_ptr<bridge::HostAllocation> memory;
    // Events recorded after the DMAs that use the slot, in queue order; each is made on the slot's
    // first use and recorded again on every later one (bridge::Queue::record_again: no event is
    // created per chunk). A download in pieces records one per piece, so that each piece can be
    // copied out as soon as it lands. The first `recorded` stand for the slot's latest use; the
    // last of them completes when all have.
    std::vector<std::unique_ptr<bridge::Event>> events;
    std::size_t recorded = 0;
  };
  // Waits until no DMA uses the slot any more; its events may then be recorded again.
  static bridge::Status drain(Slot& slot);
  // Records the slot's next event on q, after the DMA just enqueued into or out of it.
  static bridge::Status mark(QueueState* q, Slot& slot);
  // A staged copy that failed with `status`: waits for q (no DMA may still use the slots when they
  // are reused), gives the slots back and throws the Error.
  [[noreturn]] void abandon(QueueState* q, std::vector<Slot> slots, const bridge::Status& status);
  // A user's copy in `direction`: copy() when staging pays, counted; false, doing nothing, else.
  bool stage(int direction, std::size_t bytes, FunctionRef<void()> copy);
  bool worth_staging(int direction, std::size_t bytes);
  void staged_upload(QueueState* q, const void* src, bridge::Buffer& dst, std::size_t offset, std::size_t bytes);
  void staged_download(QueueState* q, bridge::Buffer& src, std::size_t offset, void* dst, std::size_t bytes,
                       bool pieces);
  // The measurements (see "Measuring where staging pays" in transfer.cpp). Each throws Error when
  // the device fails, and Interrupted when the engine is stopping or the user's copies keep
  // interfering.
  std::size_t measure_cutover(int direction, bool pieces);
  bool measure_pieces();
  // Once, on the first copy that might be staged: the device's stored measurement where the compile
  // cache has one, else the defaults and a measurement started on a background thread.
  void start_measuring();
  void measure_in_background() noexcept;
  // Waits until no user copy is staging (and the engine is not stopping): the background probes
  // time only an idle engine. Returns the count of user copies started so far.
  std::uint64_t wait_idle();
  bool interfered(std::uint64_t started) const;
  friend void stop_measurements() noexcept;
  std::vector<Slot> acquire();     // waits for prepare()'s set-up, then take_slots()
  std::vector<Slot> take_slots();  // `depth` staging slots: free ones, else new
  void release(std::vector<Slot> slots);

  // The copy pool of a direction (0 uploads, 1 downloads: each has its own thread count), rebuilt
  // when set_staging_threads changes it; a copy in progress keeps the pool it started with.
  std::shared_ptr<CopyPool> pool(int direction);

  DeviceState* device_;
  std::mutex mutex_;
  std::shared_ptr<CopyPool> pool_[2];
  unsigned pool_threads_[2] = {0, 0};
  std::vector<Slot> free_;
  std::once_flag measuring_;
  // Bytes from which staging pays per direction (SIZE_MAX: never), and whether downloads land in
  // pieces (one event each) rather than whole chunks: the defaults until a measurement is loaded
  // or taken.
  std::atomic<std::size_t> cutover_[2];
  std::atomic<bool> pieces_{false};
  std::thread prober_;           // the background measurement, if one was started
  std::once_flag prepare_once_;
  std::thread preparer_;         // prepare()'s thread
  std::mutex prepare_mutex_;
  std::condition_variable prepare_cv_;
  bool preparing_ = false;       // guarded by prepare_mutex_
  std::atomic<bool> stop_{false};  // set at process exit: the background measurement ends early
  std::atomic<unsigned> user_active_{0};      // user copies staging now
  std::atomic<std::uint64_t> user_started_{0};  // user copies staged so far
  std::atomic<std::int64_t> user_ended_ns_{0};  // when the last one ended (steady clock)
  std::mutex internal_mutex_;
  std::shared_ptr<QueueState> internal_;
  std::mutex relay_mutex_;  // one relay at a time out of this device: it owns the two relay buffers
  std::unique_ptr<bridge::HostAllocation> relay_[2];
  std::size_t relay_bytes_ = 0;  // size of each relay buffer
};

// Queue::copy between buffers of two different devices, after the core's checks: the backend's
// peer copy where it has one (asynchronous on q), else relayed through host memory (blocking until
// the data has landed, after q's earlier work). q is a queue of src's or dst's device.
void copy_across_devices(QueueState* q, const Allocation* src, std::size_t src_offset, const Allocation* dst,
                         std::size_t dst_offset, std::size_t bytes);

// Whether a copy of `bytes` through a raw host pointer might be staged at all (a cheap test done
// before anything else on the copy path).
bool may_stage(std::size_t bytes) noexcept;

// The defaults used until a device's measurement is known: staging from 4 MiB in both directions,
// downloads in whole chunks.
constexpr std::size_t default_cutover = 4u << 20;
// The stored form of a measurement (the payload of its compile-cache entry) and its strict parser
// (false for anything else: the entry is then ignored and measured again).
std::string format_measurement(const std::size_t cutover[2], bool pieces);
bool parse_measurement(const std::string& text, std::size_t cutover[2], bool& pieces);

// Stops every background measurement after its current batch and waits for it (at process exit).
void stop_measurements() noexcept;

// The device's engine, created on first use.
TransferEngine& transfer_engine(DeviceState* device);
// Counts a pageable copy that went direct.
void count_direct_copy();

}  // namespace gpurt::detail
