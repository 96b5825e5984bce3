// The transfer engine: staged copies between pageable host memory and a device.
#include "services/transfer.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "gpurt/transfer.hpp"
#include "model/host_ranges.hpp"
#include "services/cache.hpp"
#include "base/log.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#define GPURT_STREAMING_STORES 1
#endif

namespace gpurt {

namespace {
std::atomic<int> g_mode{static_cast<int>(Staging::automatic)};
std::atomic<std::uint64_t> g_staged{0}, g_direct{0}, g_staged_bytes{0};
std::atomic<std::uint64_t> g_measurements_loaded{0}, g_measurements_taken{0};
}  // namespace

void set_staging(Staging mode) { g_mode = static_cast<int>(mode); }
Staging staging() { return static_cast<Staging>(g_mode.load()); }

std::size_t staging_chunk_bytes() { return detail::TransferEngine::chunk; }

namespace {
std::atomic<unsigned> g_threads{0};  // 0: default
}  // namespace

// The same range GPURT_STAGING_THREADS accepts (env.cpp); more is refused, not cut down unseen.
void set_staging_threads(unsigned threads) {
  if (threads > 256)
    detail::invalid("set_staging_threads(" + std::to_string(threads) +
                        "): a staged copy uses at most 256 host threads; pass 1 to 256, or 0 for the defaults",
                    "gpurt::set_staging_threads");
  g_threads = threads;
}

unsigned staging_threads(CopyDirection direction) {
  if (const unsigned t = g_threads.load()) return t;
  // Measured on the H200 machine (16 cores, gpurt bench's staging sweep, streaming stores):
  // uploads 31 GB/s with 8 threads, 43 with 16; downloads 45 GB/s with 8, 28 with 12, 22 with 16.
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return direction == CopyDirection::device_to_host ? std::min(8u, std::max(1u, hw / 2)) : std::min(16u, hw);
}

TransferStatistics transfer_statistics() {
  TransferStatistics s;
  s.staged_copies = g_staged;
  s.direct_copies = g_direct;
  s.staged_bytes = g_staged_bytes;
  s.measurements_loaded = g_measurements_loaded;
  s.measurements_taken = g_measurements_taken;
  return s;
}

namespace detail {

void count_direct_copy() { ++g_direct; }

// ---- CopyPool ----

// memcpy with non-temporal (streaming) stores where the CPU has them: a staged copy's destination
// is not read again by this CPU (the DMA engine reads a staging buffer; a download's destination is
// large), so writing around the caches saves reading every destination line first - one memory
// transfer of three. Measured on the H200 machine, 256 MiB by 16 threads: 32 -> 38 GB/s into
// pinned memory, 31 -> 36.5 GB/s out of it. The stores are fenced before returning, so whoever
// waits for this thread (the pool's done signal, then the DMA) sees the data.
void stream_copy(void* dst, const void* src, std::size_t bytes) noexcept {
#ifdef GPURT_STREAMING_STORES
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(d) & 15)) & 15;
  if (bytes < head + 256) {
    std::memcpy(d, s, bytes);
    return;
  }
  std::memcpy(d, s, head);
  d += head;
  s += head;
  bytes -= head;
  for (std::size_t blocks = bytes / 64; blocks > 0; --blocks, d += 64, s += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + 48), e);
  }
  _mm_sfence();
  std::memcpy(d, s, bytes % 64);
#else
  std::memcpy(dst, src, bytes);
#endif
}

CopyPool::CopyPool(unsigned threads) {
  for (unsigned i = 1; i < threads; ++i) threads_.emplace_back([this] { worker(); });
}

CopyPool::~CopyPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void CopyPool::run_next(std::unique_lock<std::mutex>& lock) {
  const Task t = tasks_.front();
  tasks_.pop_front();
  lock.unlock();
  t.batch->body(t.index);
  lock.lock();
  if (--t.batch->left == 0) done_cv_.notify_all();
}

void CopyPool::worker() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_cv_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, nothing left
    run_next(lock);
  }
}

void CopyPool::run(std::size_t tasks, FunctionRef<void(std::size_t)> body, FunctionRef<bool(std::size_t)> gate) {
  if (tasks == 0) return;
  if (threads_.empty() || (tasks == 1 && !gate)) {
    for (std::size_t i = 0; i < tasks; ++i) {
      if (gate && !gate(i)) return;
      body(i);
    }
    return;
  }
  Batch batch{body, tasks};
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  if (!gate) {
    lock.lock();
    for (std::size_t i = 1; i < tasks; ++i) tasks_.push_back({&batch, i});
    lock.unlock();
    const std::size_t wake = std::min<std::size_t>(tasks - 1, threads_.size());
    for (std::size_t i = 0; i < wake; ++i) work_cv_.notify_one();  // wake only as many as have work
    body(0);
    lock.lock();
    --batch.left;  // no notify: the only waiter for this batch is this thread
  } else {
    // This thread does all the waiting (one caller blocks in the driver, not every copy thread)
    // and hands each task on as soon as its gate opens.
    for (std::size_t i = 0; i < tasks; ++i) {
      const bool open = gate(i);
      lock.lock();
      if (!open) {
        batch.left -= tasks - i;
        if (batch.left == 0) done_cv_.notify_all();
        break;
      }
      tasks_.push_back({&batch, i});
      lock.unlock();
      work_cv_.notify_one();
    }
    if (!lock.owns_lock()) lock.lock();
  }
  // Help with what is still queued (this batch's tasks, or another caller's) rather than sleep.
  while (batch.left > 0 && !tasks_.empty()) run_next(lock);
  done_cv_.wait(lock, [&] { return batch.left == 0; });
}

void CopyPool::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;  // memcpy's pointers must be valid even for zero bytes
  const std::size_t parts = std::min<std::size_t>(threads(), std::max<std::size_t>(1, bytes >> 19));
  const std::size_t part = ((bytes + parts - 1) / parts + 63) & ~std::size_t(63);  // parts * part >= bytes
  run(parts, [&](std::size_t i) {
    const std::size_t begin = std::min(bytes, i * part), end = std::min(bytes, begin + part);
    if (begin < end) stream_copy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin);
  });
}

// ---- TransferEngine ----

namespace {
// Engines whose background measurement may still run, stopped and joined at exit (before the
// drivers' own exit handlers, registered earlier, tear down what the thread uses).
std::mutex g_probing_mutex;
std::vector<TransferEngine*>* g_probing = nullptr;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

[[noreturn]] void fail_copy(const bridge::Status& s, DeviceState* d) { raise(s, d); }
}  // namespace

TransferEngine::TransferEngine(DeviceState* device) : device_(device) {
  cutover_[0] = default_cutover;
  cutover_[1] = default_cutover;
}

std::shared_ptr<CopyPool> TransferEngine::pool(int direction) {
  const unsigned want =
      staging_threads(direction == 0 ? CopyDirection::host_to_device : CopyDirection::device_to_host);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!pool_[direction] || pool_threads_[direction] != want) {
    const auto t0 = std::chrono::steady_clock::now();
    pool_[direction] = std::make_shared<CopyPool>(want);
    pool_threads_[direction] = want;
    log(detail::LogLevel::debug, "transfer",
        device_->selector + (direction == 0 ? ": upload" : ": download") + " copy threads (" + std::to_string(want) +
            ") started in " + std::to_string(ms_since(t0)) + " ms");
  }
  return pool_[direction];
}

TransferEngine::~TransferEngine() {
  {
    std::lock_guard<std::mutex> lock(g_probing_mutex);
    if (g_probing) g_probing->erase(std::remove(g_probing->begin(), g_probing->end(), this), g_probing->end());
  }
  stop_ = true;
  if (preparer_.joinable()) preparer_.join();
  if (prober_.joinable()) prober_.join();
  for (Slot& s : free_) (void)drain(s);
}

bridge::Status TransferEngine::drain(Slot& slot) {
  if (slot.recorded == 0) return bridge::Status::success();
  const std::size_t last = slot.recorded - 1;
  slot.recorded = 0;
  return slot.events[last]->wait();  // the queue runs them in order
}

bridge::Status TransferEngine::mark(QueueState* q, Slot& slot) {
  if (slot.recorded == slot.events.size()) slot.events.emplace_back();  // the slot's first use this far
  bridge::Status s = q->impl->record_again(slot.events[slot.recorded]);
  if (s.ok()) ++slot.recorded;
  return s;
}

void TransferEngine::abandon(QueueState* q, std::vector<Slot> slots, const bridge::Status& status) {
  (void)q->impl->finish();  // a DMA enqueued before the failure may still use a slot
  for (Slot& s : slots) s.recorded = 0;
  release(std::move(slots));
  fail_copy(status, device_);
}

std::vector<TransferEngine::Slot> TransferEngine::acquire() {
  {
    std::unique_lock<std::mutex> lock(prepare_mutex_);
    prepare_cv_.wait(lock, [&] { return !preparing_; });
  }
  return take_slots();
}

std::vector<TransferEngine::Slot> TransferEngine::take_slots() {
  std::vector<Slot> slots;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    while (!free_.empty() && slots.size() < depth) {
      slots.push_back(std::move(free_.back()));
      free_.pop_back();
    }
  }
  if (slots.size() < depth) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::size_t had = slots.size();
    while (slots.size() < depth) {
      Slot s;
      check(device_->impl->allocate_host(chunk, s.memory), device_);
      slots.push_back(std::move(s));
    }
    log(detail::LogLevel::debug, "transfer",
        device_->selector + ": " + std::to_string(depth - had) + " pinned staging buffers of " +
            std::to_string(chunk >> 20) + " MiB allocated in " + std::to_string(ms_since(t0)) + " ms");
  }
  return slots;
}

void TransferEngine::release(std::vector<Slot> slots) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Slot& s : slots) free_.push_back(std::move(s));
}

void TransferEngine::staged_upload(QueueState* q, const void* src, bridge::Buffer& dst, std::size_t offset,
                                   std::size_t bytes) {
  std::vector<Slot> slots = acquire();
  const std::shared_ptr<CopyPool> copier = pool(0);
  std::size_t i = 0;
  for (std::size_t done = 0; done < bytes; done += chunk, ++i) {
    Slot& slot = slots[i % depth];
    const std::size_t len = std::min(chunk, bytes - done);
    bridge::Status s = drain(slot);  // an earlier DMA may still read this slot
    if (s.ok()) {
      copier->copy(slot.memory->data(), static_cast<const char*>(src) + done, len);
      s = q->impl->copy_from_host(slot.memory->data(), dst, offset + done, len, false);
    }
    if (s.ok()) s = mark(q, slot);
    if (!s.ok()) abandon(q, std::move(slots), s);
  }
  release(std::move(slots));
}

// In pieces (see TransferEngine::piecewise_), a download's chunk lands in its slot one piece at a
// time, one DMA and one event each; the calling thread waits for them in order and hands each
// piece to a copy thread as soon as it has landed: the memcpy starts after the first piece, not
// after the whole chunk, which is what makes a staged copy of a few MiB pay. Otherwise a chunk
// lands whole and all copy threads copy it out together.
void TransferEngine::staged_download(QueueState* q, bridge::Buffer& src, std::size_t offset, void* dst,
                                     std::size_t bytes, bool pieces) {
  std::vector<Slot> slots = acquire();
  const std::shared_ptr<CopyPool> copier = pool(1);
  const std::size_t chunks = (bytes + chunk - 1) / chunk;
  auto piece_bytes = [&](std::size_t len) {  // at least 256 KiB, at most one piece per thread
    if (!pieces) return len;
    const std::size_t n = std::min<std::size_t>(copier->threads(), std::max<std::size_t>(1, len >> 18));
    return ((len + n - 1) / n + 4095) & ~std::size_t(4095);
  };
  auto enqueue = [&](std::size_t c) {
    Slot& slot = slots[c % depth];
    bridge::Status s = drain(slot);  // a DMA from an earlier copy may still use this slot
    const std::size_t len = std::min(chunk, bytes - c * chunk), piece = piece_bytes(len);
    for (std::size_t at = 0; at < len && s.ok(); at += piece) {
      s = q->impl->copy_to_host(src, offset + c * chunk + at, static_cast<char*>(slot.memory->data()) + at,
                                std::min(piece, len - at), false);
      if (s.ok()) s = mark(q, slot);
    }
    return s;
  };
  bridge::Status s = bridge::Status::success();
  for (std::size_t c = 0; c < std::min(chunks, depth) && s.ok(); ++c) s = enqueue(c);
  for (std::size_t c = 0; c < chunks && s.ok(); ++c) {
    Slot& slot = slots[c % depth];
    const std::size_t len = std::min(chunk, bytes - c * chunk), piece = piece_bytes(len);
    char* out = static_cast<char*>(dst) + c * chunk;
    const char* in = static_cast<const char*>(slot.memory->data());
    if (pieces) {
      copier->run(
          slot.recorded,
          [&](std::size_t p) { stream_copy(out + p * piece, in + p * piece, std::min(piece, len - p * piece)); },
          [&](std::size_t p) { return (s = slot.events[p]->wait()).ok(); });
      slot.recorded = 0;  // all landed (or the copy failed)
    } else if ((s = drain(slot)).ok()) {
      copier->copy(out, in, len);
    }
    if (s.ok() && c + depth < chunks) s = enqueue(c + depth);
  }
  if (!s.ok()) abandon(q, std::move(slots), s);
  release(std::move(slots));
}

// ---- Measuring where staging pays ----
//
// Where staging starts to pay (the cut-over, per direction) and whether downloads should land in
// pieces depend on the device, its driver and the host, so they are measured - but never inside a
// user's copy: in the H200's first copy of 400 MB, the probes (16 MiB x sizes x paths x batches)
// were most of why the first copy of a process ran at a third of the warm rate. Instead:
//  - the measurement is stored in the compile cache (services/cache.cpp: the same directory, the
//    same trust rules, the same entry format with its checksum), keyed by gpurt's version, the
//    device (backend, name, architecture, driver version), the plugin file and the staging thread
//    counts; a later process loads it on its first copy that might be staged;
//  - where there is none (the first process, GPURT_CACHE=off, a refused or malformed entry), the
//    engine uses the defaults (default_cutover, whole chunks) at once and measures on a background
//    thread, on a private queue, timing only while no user copy is staging (a batch that a user
//    copy overlapped is timed again), then uses the result and stores it. At process exit the
//    thread is stopped after its current batch (stop_measurements, an atexit hook).
// The loading, like the copy threads and the pinned staging buffers, happens in prepare(), on a
// thread started when a buffer a staged copy could fill is allocated.

namespace {
// What the engine's measurements run on: a private queue, 16 MiB of device memory and as much
// pageable host memory.
// Opening one throws the device's Error (the measurement then keeps the defaults and says why).
struct Probe {
  static constexpr std::size_t largest = 16u << 20;
  std::shared_ptr<QueueState> q;
  std::unique_ptr<bridge::Buffer> scratch;
  std::vector<char> host;

  explicit Probe(DeviceState* device) : q(make_queue(device, false)) {
    check(device->impl->allocate(largest, scratch), device);
    host.assign(largest, 1);
  }
  // Seconds per call of body(bytes): the best of three batches of back-to-back calls (16 MiB in
  // all, at least two calls), the queue finished after each batch. A batch, not a single call:
  // what a path costs includes its variance (a copy thread that wakes late), and a single best
  // call hid that - the 1 MiB probe on the H200 once chose staging at 10.6 GB/s against 8.0 direct
  // while back-to-back staged copies then ran at 6.7 against 8.4. `idle` waits until the engine
  // has no user copy (returning the count started so far) and `interfered` says whether one
  // started since: such a batch is timed again, up to 20 times.
  template <class Body, class Idle, class Interfered>
  double seconds(std::size_t bytes, Body&& body, Idle&& idle, Interfered&& interfered) {
    using clock = std::chrono::steady_clock;
    const std::size_t calls = std::max<std::size_t>(2, largest / bytes);
    double best = 1e30;
    int retries = 20;
    for (int r = 0; r < 3; ++r) {
      const std::uint64_t started = idle();
      const auto t0 = clock::now();
      for (std::size_t i = 0; i < calls; ++i) body(bytes);
      (void)q->impl->finish();
      if (interfered(started)) {
        if (--retries < 0) throw TransferEngine::Interrupted{};
        --r;
        continue;
      }
      best = std::min(best, std::chrono::duration<double>(clock::now() - t0).count());
    }
    return best / static_cast<double>(calls);
  }
};

}  // namespace

void stop_measurements() noexcept {
  std::vector<TransferEngine*> engines;
  {
    std::lock_guard<std::mutex> lock(g_probing_mutex);
    if (g_probing) engines.swap(*g_probing);
  }
  for (TransferEngine* e : engines) {
    e->stop_ = true;
    if (e->preparer_.joinable()) e->preparer_.join();  // first: it may start the prober
    if (e->prober_.joinable()) e->prober_.join();
  }
}

namespace {
// Adds an engine to those stopped and joined at exit (once per engine is enough; twice is harmless).
void join_at_exit(TransferEngine* engine) {
  std::lock_guard<std::mutex> lock(g_probing_mutex);
  if (!g_probing) {
    g_probing = new std::vector<TransferEngine*>;  // process lifetime: read by the exit hook
    // Exit hooks run in reverse order of registration: the libraries the threads use must have
    // registered theirs first, or they are torn down under a running thread. The drivers did at
    // device open; OpenSSL (the cache's SHA-256) registers its own on first use, so use it now.
    (void)sha256_hex(std::string());
    std::atexit([] { stop_measurements(); });
  }
  if (std::find(g_probing->begin(), g_probing->end(), engine) == g_probing->end()) g_probing->push_back(engine);
}
}  // namespace

namespace {
std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
// How long the engine must have had no user copy before a probe batch starts: a program's copies
// often come in runs (inputs up, a launch, the result down), and the probes wait for a pause.
constexpr std::int64_t quiet_ns = 10'000'000;
}  // namespace

std::uint64_t TransferEngine::wait_idle() {
  for (;;) {
    if (stop_) throw Interrupted{};
    const std::uint64_t started = user_started_.load();
    if (user_active_.load() == 0 && now_ns() - user_ended_ns_.load() >= quiet_ns) return started;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

bool TransferEngine::interfered(std::uint64_t started) const {
  return user_started_.load() != started || user_active_.load() != 0;
}

// Whether downloads should land in pieces: pieces pay where the driver's events are cheap and
// cost where they are not, so each device decides, on 16 MiB, and pieces must win by 20%. On the
// H200, CUDA: 31-33 GB/s in pieces against 22-23 whole at 16 MiB, and 43 against 35 at 64 MiB;
// NVIDIA OpenCL: 21-28 against 24-28 at 16 MiB, but 12-15 against 30 at 64 MiB - the small probe
// does not show how much pieces lose there, hence the margin.
bool TransferEngine::measure_pieces() {
  Probe p(device_);
  auto run = [&](bool pieces) {
    return p.seconds(
        p.largest, [&](std::size_t n) { staged_download(p.q.get(), *p.scratch, 0, p.host.data(), n, pieces); },
        [&] { return wait_idle(); }, [&](std::uint64_t s) { return interfered(s); });
  };
  const double whole = run(false), pieces = run(true);
  log(detail::LogLevel::info, "transfer",
      device_->selector + " download " + std::to_string(p.largest >> 20) + " MiB staged: whole chunks " +
          std::to_string(p.largest / whole * 1e-9) + " GB/s, in pieces " + std::to_string(p.largest / pieces * 1e-9) +
          " GB/s");
  return pieces * 1.2 < whole;
}

// Where staging starts to pay in a direction: the smallest probe size at which a staged copy
// beats the driver's direct pageable copy by 10%.
std::size_t TransferEngine::measure_cutover(int direction, bool pieces) {
  static const std::size_t probes[] = {1u << 20, 4u << 20, Probe::largest};
  Probe p(device_);
  auto idle = [&] { return wait_idle(); };
  auto busy = [&](std::uint64_t s) { return interfered(s); };
  for (std::size_t bytes : probes) {
    double direct = 0, staged = 0;
    if (direction == 0) {
      direct = p.seconds(
          bytes, [&](std::size_t n) { (void)p.q->impl->copy_from_host(p.host.data(), *p.scratch, 0, n, true); }, idle,
          busy);
      staged = p.seconds(bytes, [&](std::size_t n) { staged_upload(p.q.get(), p.host.data(), *p.scratch, 0, n); }, idle, busy);
    } else {
      direct = p.seconds(
          bytes, [&](std::size_t n) { (void)p.q->impl->copy_to_host(*p.scratch, 0, p.host.data(), n, true); }, idle,
          busy);
      staged = p.seconds(
          bytes, [&](std::size_t n) { staged_download(p.q.get(), *p.scratch, 0, p.host.data(), n, pieces); }, idle, busy);
    }
    log(detail::LogLevel::info, "transfer",
        device_->selector + (direction == 0 ? " upload " : " download ") + std::to_string(bytes >> 20) +
            " MiB: direct " + std::to_string(bytes / direct * 1e-9) + " GB/s, staged " +
            std::to_string(bytes / staged * 1e-9) + " GB/s");
    if (staged * 1.1 < direct) return bytes;
  }
  return std::numeric_limits<std::size_t>::max();
}

std::string format_measurement(const std::size_t cutover[2], bool pieces) {
  auto size = [](std::size_t b) {
    return b == std::numeric_limits<std::size_t>::max() ? std::string("never") : std::to_string(b);
  };
  return "gpurt transfer measurement 1\nupload_cutover " + size(cutover[0]) + "\ndownload_cutover " +
         size(cutover[1]) + "\ndownload_pieces " + (pieces ? "1" : "0") + "\n";
}

bool parse_measurement(const std::string& text, std::size_t cutover[2], bool& pieces) {
  std::size_t at = 0;
  auto line = [&](const char* name, std::string& value) {  // "name value\n", scanned once
    const std::size_t n = std::strlen(name);
    if (text.compare(at, n, name) != 0 || at + n >= text.size() || text[at + n] != ' ') return false;
    const std::size_t end = text.find('\n', at + n + 1);
    if (end == std::string::npos) return false;
    value = text.substr(at + n + 1, end - at - n - 1);
    at = end + 1;
    return true;
  };
  auto size = [](const std::string& v, std::size_t& out) {
    if (v == "never") {
      out = std::numeric_limits<std::size_t>::max();
      return true;
    }
    if (v.empty() || v.size() > 15) return false;  // at most 15 digits: no overflow
    std::size_t x = 0;
    for (char c : v) {
      if (c < '0' || c > '9') return false;
      x = x * 10 + static_cast<std::size_t>(c - '0');
    }
    out = x;
    return true;
  };
  const std::string head = "gpurt transfer measurement 1\n";
  if (text.compare(0, head.size(), head) != 0) return false;
  at = head.size();
  std::string up, down, p;
  std::size_t c[2];
  if (!line("upload_cutover", up) || !line("download_cutover", down) || !line("download_pieces", p) ||
      at != text.size() || !size(up, c[0]) || !size(down, c[1]) || (p != "0" && p != "1"))
    return false;
  cutover[0] = c[0];
  cutover[1] = c[1];
  pieces = p == "1";
  return true;
}

namespace {
std::string describe_measurement(const std::size_t cutover[2], bool pieces) {
  auto from = [](std::size_t b) {
    return b == std::numeric_limits<std::size_t>::max() ? std::string("never") : "from " + std::to_string(b) + " bytes";
  };
  return "uploads staged " + from(cutover[0]) + ", downloads staged " + from(cutover[1]) +
         (pieces ? " in pieces" : " in whole chunks");
}

// What the measurement's key covers beyond the device: its format, and the thread counts it was
// taken with.
std::string measurement_kind() {
  return "transfer measurement 1|threads " + std::to_string(staging_threads(CopyDirection::host_to_device)) + "/" +
         std::to_string(staging_threads(CopyDirection::device_to_host));
}
}  // namespace

void TransferEngine::start_measuring() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string key = device_record_key(*device_, measurement_kind());
  if (!key.empty()) {
    if (const std::optional<std::string> stored = cache_load(key)) {
      std::size_t c[2];
      bool pieces = false;
      if (parse_measurement(*stored, c, pieces)) {
        cutover_[0] = c[0];
        cutover_[1] = c[1];
        pieces_ = pieces;
        ++g_measurements_loaded;
        log(detail::LogLevel::debug, "transfer",
            device_->selector + ": staging measurement loaded from " + cache_entry_path(key) + " in " +
                std::to_string(ms_since(t0)) + " ms: " + describe_measurement(c, pieces));
        return;
      }
      log(detail::LogLevel::warn, "transfer",
          "the stored staging measurement " + cache_entry_path(key) + " is malformed; ignored, measuring again");
    }
  }
  join_at_exit(this);
  log(detail::LogLevel::debug, "transfer",
      device_->selector + ": no stored staging measurement; using the defaults and measuring in the background");
  try {
    prober_ = std::thread([this] { measure_in_background(); });
  } catch (const std::exception& e) {  // no thread: keep the defaults
    log(detail::LogLevel::warn, "transfer", std::string("cannot start the staging measurement: ") + e.what());
  }
}

void TransferEngine::prepare() noexcept {
  try {
    std::call_once(prepare_once_, [&] {
      join_at_exit(this);
      {
        std::lock_guard<std::mutex> lock(prepare_mutex_);
        preparing_ = true;
      }
      preparer_ = std::thread([this] {
        const auto t0 = std::chrono::steady_clock::now();
        try {
          if (!stop_) std::call_once(measuring_, [&] { start_measuring(); });
          const std::size_t never = std::numeric_limits<std::size_t>::max();
          if (staging() == Staging::automatic && cutover_[0] == never && cutover_[1] == never) {
            log(detail::LogLevel::debug, "transfer", device_->selector + ": staging never pays here; nothing to prepare");
            std::lock_guard<std::mutex> lock(prepare_mutex_);
            preparing_ = false;
            prepare_cv_.notify_all();
            return;
          }
          if (!stop_) {
            (void)pool(0);
            (void)pool(1);
            release(take_slots());
          }
          log(detail::LogLevel::debug, "transfer",
              device_->selector + ": staging prepared in the background in " + std::to_string(ms_since(t0)) + " ms");
        } catch (const std::exception& e) {
          log(detail::LogLevel::info, "transfer", device_->selector + ": preparing staging failed: " + e.what() +
                                                      "; the first staged copy sets it up");
        }
        std::lock_guard<std::mutex> lock(prepare_mutex_);
        preparing_ = false;
        prepare_cv_.notify_all();
      });
    });
  } catch (const std::exception& e) {  // no thread: the first copy sets up what it needs
    std::lock_guard<std::mutex> lock(prepare_mutex_);
    preparing_ = false;
    prepare_cv_.notify_all();
    log(detail::LogLevel::info, "transfer", std::string("cannot prepare staging in the background: ") + e.what());
  }
}

void TransferEngine::measure_in_background() noexcept {
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t c[2];
  bool pieces = false;
  try {
    (void)wait_idle();  // nothing of the probes (their queue, memory) is set up during a user's copy
    pieces = measure_pieces();
    c[0] = measure_cutover(0, pieces);
    c[1] = measure_cutover(1, pieces);
  } catch (const Interrupted&) {
    log(detail::LogLevel::debug, "transfer", device_->selector + ": staging measurement interrupted; keeping the defaults");
    return;
  } catch (const std::exception& e) {
    log(detail::LogLevel::warn, "transfer", std::string("measuring where staging pays failed: ") + e.what() +
                                                "; keeping the defaults");
    return;
  }
  pieces_ = pieces;
  cutover_[0] = c[0];
  cutover_[1] = c[1];
  ++g_measurements_taken;
  std::string where = describe_measurement(c, pieces) + "; not stored (the compile cache is off)";
  try {
    const std::string key = device_record_key(*device_, measurement_kind());
    std::string why;
    if (!key.empty()) where = cache_store(key, format_measurement(c, pieces), why) ? describe_measurement(c, pieces) + "; stored in " + cache_entry_path(key)
                                                                                   : describe_measurement(c, pieces) + "; not stored (" + why + ")";
  } catch (const std::exception& e) {
    where = std::string("not stored (") + e.what() + ")";
  }
  log(detail::LogLevel::debug, "transfer",
      device_->selector + ": staging measured in the background in " + std::to_string(ms_since(t0)) + " ms, " + where);
}

bool may_stage(std::size_t bytes) noexcept {
  const Staging mode = staging();
  return mode == Staging::always || (mode == Staging::automatic && bytes >= (1u << 20));
}

bool TransferEngine::worth_staging(int direction, std::size_t bytes) {
  const Staging mode = staging();
  if (mode == Staging::never) return false;
  if (mode == Staging::always) return true;
  if (bytes < (1u << 20)) return false;
  std::call_once(measuring_, [&] { start_measuring(); });
  return bytes >= cutover_[direction].load(std::memory_order_relaxed);
}

namespace {
// A user copy in the engine, seen by the background measurement.
struct UserCopy {
  std::atomic<unsigned>& active;
  std::atomic<std::int64_t>& ended_ns;
  UserCopy(std::atomic<unsigned>& a, std::atomic<std::uint64_t>& started, std::atomic<std::int64_t>& ended)
      : active(a), ended_ns(ended) {
    ++active;
    ++started;
  }
  ~UserCopy() {
    ended_ns = now_ns();
    --active;
  }
};
}  // namespace

bool TransferEngine::stage(int direction, std::size_t bytes, FunctionRef<void()> copy) {
  const UserCopy user(user_active_, user_started_, user_ended_ns_);  // before a measurement can start
  if (!worth_staging(direction, bytes)) return false;
  copy();
  ++g_staged;  // counted here: the engine's own measurements are not
  g_staged_bytes += bytes;
  return true;
}

bool TransferEngine::upload(QueueState* q, const void* src, bridge::Buffer& dst, std::size_t offset,
                            std::size_t bytes) {
  return stage(0, bytes, [&] { staged_upload(q, src, dst, offset, bytes); });
}

bool TransferEngine::download(QueueState* q, bridge::Buffer& src, std::size_t offset, void* dst, std::size_t bytes) {
  return stage(1, bytes, [&] { staged_download(q, src, offset, dst, bytes, pieces_.load(std::memory_order_relaxed)); });
}

QueueState* TransferEngine::internal_queue() {
  std::lock_guard<std::mutex> lock(internal_mutex_);
  if (!internal_) internal_ = make_queue(device_, false);
  return internal_.get();
}

void TransferEngine::relay(QueueState* sq, bridge::Buffer& src, std::size_t src_offset, QueueState* dq,
                           bridge::Buffer& dst, std::size_t dst_offset, std::size_t bytes) {
  std::lock_guard<std::mutex> lock(relay_mutex_);
  const std::size_t want = std::min(relay_chunk, (bytes + (1u << 20) - 1) & ~std::size_t((1u << 20) - 1));
  if (relay_bytes_ < want) {
    relay_[0].reset();
    relay_[1].reset();
    relay_bytes_ = 0;
    for (auto& r : relay_) check(device_->impl->allocate_host(want, r), device_);
    relay_bytes_ = want;
  }
  const std::size_t piece = relay_bytes_;
  const std::size_t chunks = (bytes + piece - 1) / piece;
  // Downloads into a relay buffer still in flight: waited for however this function leaves, so
  // that no DMA writes into a relay buffer the next relay (or its release) takes over. One event
  // per relay buffer, recorded again for each chunk.
  struct Landing {
    std::unique_ptr<bridge::Event> event[2];
    bool pending[2] = {false, false};
    ~Landing() {
      for (int i = 0; i < 2; ++i)
        if (pending[i]) (void)event[i]->wait();
    }
  } landing;
  auto fetch = [&](std::size_t c) {
    const std::size_t len = std::min(piece, bytes - c * piece);
    bridge::Status s = sq->impl->copy_to_host(src, src_offset + c * piece, relay_[c % 2]->data(), len, false);
    if (!s.ok()) return s;
    s = sq->impl->record_again(landing.event[c % 2]);
    // No event to wait for: the download is in flight all the same; wait for it here.
    if (!s.ok()) (void)sq->impl->finish();
    landing.pending[c % 2] = s.ok();
    return s;
  };
  bridge::Status s = fetch(0);
  if (!s.ok()) fail_copy(s, device_);
  for (std::size_t c = 0; c < chunks; ++c) {
    s = landing.event[c % 2]->wait();
    landing.pending[c % 2] = false;
    if (!s.ok()) fail_copy(s, device_);
    if (c + 1 < chunks) {  // the next chunk comes down while this one goes up
      s = fetch(c + 1);
      if (!s.ok()) fail_copy(s, device_);
    }
    const void* p = relay_[c % 2]->data();
    const std::size_t len = std::min(piece, bytes - c * piece), at = dst_offset + c * piece;
    // Host memory to the destination's device, blocking until the relay buffer may be reused: through
    // that device's staging where it pays (this device's pinned memory is not pinned for another
    // backend), else its direct copy.
    if (!(may_stage(len) && transfer_engine(dq->device).upload(dq, p, dst, at, len))) {
      s = dq->impl->copy_from_host(p, dst, at, len, true);
      if (!s.ok()) fail_copy(s, dq->device);
    }
  }
  s = dq->impl->finish();
  if (!s.ok()) fail_copy(s, dq->device);
}

void copy_across_devices(QueueState* q, const Allocation* src, std::size_t src_offset, const Allocation* dst,
                         std::size_t dst_offset, std::size_t bytes) {
  DeviceState* from = src->device;
  DeviceState* to = dst->device;
  if (from->backend == to->backend) {
    const bridge::Status s = q->impl->copy_peer(*src->impl, src_offset, *dst->impl, dst_offset, bytes);
    if (s.ok()) return;
    if (s.category != ErrorCategory::unsupported) raise(s, q->device);
  }
  // Relayed: after everything q has been given (including waits for other devices' events), and
  // blocking until the data is in dst, so that q's later work sees it.
  check(q->impl->finish(), q->device);
  TransferEngine& engine = transfer_engine(from);
  QueueState* sq = q->device == from ? q : engine.internal_queue();
  QueueState* dq = q->device == to ? q : transfer_engine(to).internal_queue();
  engine.relay(sq, *src->impl, src_offset, dq, *dst->impl, dst_offset, bytes);
}

HostAllocationState::~HostAllocationState() {
  if (impl) release_host_range(impl->data());
}

TransferEngine& transfer_engine(DeviceState* device) {
  std::call_once(device->engine_once, [&] { device->engine = std::make_shared<TransferEngine>(device); });
  return *device->engine;
}

}  // namespace detail
}  // namespace gpurt
