// The host-range registry.
//
// Every copy from or to a raw pointer asks host_memory_at, so the answer takes no lock: the
// registry is an immutable list of ranges, sorted by start, replaced whole under `mutex` when a
// range is added or goes, and numbered by `version`. Each thread keeps its own reference to the
// list it last read and takes the mutex only when `version` has moved since (once per HostBuffer,
// registration or shared buffer made or freed, not per copy): in a steady state a lookup is one
// atomic load and a binary search, writing no shared memory.
// Why this is safe with ranges added and removed on other threads at the same time: a published
// list is never changed, and a thread reads only the list its own shared_ptr holds, so a list is
// freed only once no thread refers to it (a thread holds at most one old list, until its next copy
// or its end). A new range's pointer reaches a copying thread only through something ordered after
// its registration (its allocation returned it), so that thread's acquire load sees the new version
// and reads the new list; a range that goes is released before its memory is freed, and a thread
// that copies from memory freed under it had a use-after-free anyway.
#include "model/host_ranges.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <iterator>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "base/log.hpp"

namespace gpurt::detail {

namespace {
struct Range {
  std::uintptr_t begin, end;
  HostMemory kind;
};
using RangeList = std::vector<Range>;
struct Registry {
  std::mutex mutex;
  std::shared_ptr<const RangeList> list;  // null: none recorded yet
  std::atomic<std::uint64_t> version{0};
  // Read-only ranges in `list`: while there is none, a download's check is one relaxed load.
  std::atomic<std::size_t> read_only{0};
};
Registry& registry() {
  static Registry* r = new Registry;  // process lifetime: a HostBuffer may go in static destruction
  return *r;
}
// The first range of `l` (a RangeList, const or not) starting after `a`.
template <class List>
auto after(List& l, std::uintptr_t a) {
  return std::upper_bound(l.begin(), l.end(), a, [](std::uintptr_t x, const Range& r) { return x < r.begin; });
}
std::uintptr_t end_of(std::uintptr_t a, std::size_t bytes) { return bytes > UINTPTR_MAX - a ? UINTPTR_MAX : a + bytes; }
// Whether [a, end) shares a byte with a range of `l`.
bool overlaps(const RangeList& l, std::uintptr_t a, std::uintptr_t end) {
  auto at = after(l, a);  // ranges from here start after a
  if (at != l.begin() && std::prev(at)->end > a) return true;
  return at != l.end() && at->begin < end;
}
// Publishes a copy of the list with `edit` applied, under the registry's mutex (held by the caller).
template <class Edit>
void publish(Registry& r, Edit&& edit) {
  auto next = r.list ? std::make_shared<RangeList>(*r.list) : std::make_shared<RangeList>();
  edit(*next);
  r.read_only.store(static_cast<std::size_t>(std::count_if(next->begin(), next->end(), [](const Range& x) {
                      return x.kind == HostMemory::pinned_read_only;
                    })),
                    std::memory_order_relaxed);
  r.list = std::move(next);
  r.version.fetch_add(1, std::memory_order_release);
}
void insert(RangeList& l, std::uintptr_t a, std::size_t bytes, HostMemory kind) {
  auto at = after(l, a);
  if (at != l.begin() && std::prev(at)->begin == a) *std::prev(at) = Range{a, end_of(a, bytes), kind};  // the same start again
  else l.insert(at, Range{a, end_of(a, bytes), kind});
}
}  // namespace

void add_host_range(const void* p, std::size_t bytes, HostMemory kind) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  publish(r, [&](RangeList& l) { insert(l, reinterpret_cast<std::uintptr_t>(p), bytes, kind); });
}

bool claim_host_range(const void* p, std::size_t bytes, HostMemory kind) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (bytes > 0 && r.list && overlaps(*r.list, a, end_of(a, bytes))) return false;
  publish(r, [&](RangeList& l) { insert(l, a, bytes, kind); });
  return true;
}

void release_host_range(const void* p) noexcept {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (!r.list) return;
  auto at = after(*r.list, a);
  if (at == r.list->begin() || std::prev(at)->begin != a) return;
  try {
    publish(r, [&](RangeList& l) { l.erase(std::prev(after(l, a))); });
  } catch (const std::bad_alloc&) {
    // The range stays recorded (only where host memory ran out): memory later at that address is
    // taken for what the range was - a pageable copy there would not block, a download there may be
    // refused, a registration there refused as overlapping - until the process ends.
    try {
      log(LogLevel::error, "host memory", "host memory ran out while forgetting a pinned or shared host range");
    } catch (...) {  // no memory for the message either
    }
  }
}

namespace {
// The list as this thread last read it, brought up to date (one atomic load when nothing changed).
const std::shared_ptr<const RangeList>& current_list() {
  thread_local std::shared_ptr<const RangeList> seen;  // this thread's reference to the list it reads
  thread_local std::uint64_t seen_version = 0;
  Registry& r = registry();
  if (r.version.load(std::memory_order_acquire) != seen_version) {
    std::lock_guard<std::mutex> lock(r.mutex);
    seen = r.list;
    seen_version = r.version.load(std::memory_order_relaxed);
  }
  return seen;
}
}  // namespace

bool overlaps_read_only(const void* p, std::size_t bytes) {
  // A registration made before the download was asked for is seen: its pointer reached this thread
  // through something ordered after the registration (as for host_memory_at).
  if (registry().read_only.load(std::memory_order_relaxed) == 0) return false;
  const std::shared_ptr<const RangeList>& seen = current_list();
  if (!seen || seen->empty() || bytes == 0) return false;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t end = end_of(a, bytes);
  auto at = after(*seen, a);
  if (at != seen->begin()) --at;  // the range starting at or before a may reach into [a, end)
  for (; at != seen->end() && at->begin < end; ++at)
    if (at->kind == HostMemory::pinned_read_only && at->end > a) return true;
  return false;
}

HostMemory host_memory_at(const void* p, std::size_t bytes) {
  const std::shared_ptr<const RangeList>& seen = current_list();
  if (!seen || seen->empty()) return HostMemory::pageable;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const auto at = after(*seen, a);
  if (at == seen->begin()) return HostMemory::pageable;
  const Range& in = *std::prev(at);
  return a <= in.end && bytes <= in.end - a ? in.kind : HostMemory::pageable;
}

}  // namespace gpurt::detail
