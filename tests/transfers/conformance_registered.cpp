// Registered host memory (device.hpp Device::register_host; api-guide.md, "Registered host memory")
// on every device: a std::vector pinned in place copies both ways exactly, through the HostBuffer,
// raw pointers and ranges inside it and views at odd offsets; overlapping, unaligned, null,
// read-only and many registrations; a device that cannot register says so.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "gpurt/graph.hpp"
#include "gpurt/transfer.hpp"
#include "staging_support.hpp"

using namespace gpurt;

namespace {

// The registration of `v`, or an empty HostBuffer where the device refuses as unsupported (checked
// to name the device).
template <class T>
HostBuffer<T> registered(const Device& dev, T* p, std::size_t n) {
  try {
    return dev.register_host(p, n);
  } catch (const Error& e) {
    if (e.category() != ErrorCategory::unsupported) throw;
    CHECK(std::string(e.what()).find(dev.selector()) != std::string::npos);
    return HostBuffer<T>();
  }
}

// Whether the device registers host memory (checked to refuse as promised if not).
bool registers(const Device& dev) {
  std::vector<int> probe(4);
  return registered(dev, probe.data(), probe.size()).valid();
}

// `pages` pages the process may only read (anonymous, zero), unmapped at the end.
struct ReadOnlyPages {
  explicit ReadOnlyPages(std::size_t pages)
      : bytes(pages * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE))),
        data(::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {
    REQUIRE(data != MAP_FAILED);
  }
  ~ReadOnlyPages() { ::munmap(data, bytes); }
  ReadOnlyPages(const ReadOnlyPages&) = delete;
  ReadOnlyPages& operator=(const ReadOnlyPages&) = delete;
  std::size_t bytes;
  void* data;
};

// Whether Queue::copy(Buffer<T>, D) compiles.
template <class D, class = void>
struct downloads_into : std::false_type {};
template <class D>
struct downloads_into<D, std::void_t<decltype(std::declval<Queue&>().copy(std::declval<const Buffer<float>&>(),
                                                                           std::declval<const D&>()))>>
    : std::true_type {};
static_assert(downloads_into<HostBuffer<float>>::value, "a HostBuffer is a download's destination");
static_assert(!downloads_into<HostBuffer<const float>>::value,
              "device.hpp: a HostBuffer<const T> is a source; \"a download into it does not compile\"");

}  // namespace

TEST_CASE("device.hpp: a registered std::vector copies both ways exactly, through its HostBuffer, raw pointers, ranges and odd views") {
  // device.hpp: "every copy from or to memory inside it is a pinned copy: direct and asynchronous
  // ... whether the copy names the HostBuffer or a raw pointer or range inside it".
  // Every pageable copy staged (GPURT_STAGING=on), so that a registered copy taken for pageable
  // would count; and no cut-over measured in the background, whose probes count too (a 4 MB buffer
  // sets the transfer engine up: the counters moved under this case once, on the mock).
  const test::StagingGuard restore;
  set_staging(Staging::always);
  test::Fixture f;
  for (const std::size_t n : {std::size_t(1), std::size_t(4099), std::size_t(1000003)}) {
    std::vector<float> host = test::random_vector<float>(n);
    const std::vector<float> original = host;
    HostBuffer<float> h = registered(f.dev, host.data(), host.size());
    if (!h.valid()) GPURT_SKIP(f.dev.description() + " cannot register host memory (refused as promised)");
    CHECK(h.data() == host.data());
    CHECK(h.size() == n);
    Buffer<float> d = f.dev.alloc<float>(n);
    const TransferStatistics before = transfer_statistics();
    f.q.copy(host, d);  // a range inside the registration: pinned, asynchronous
    f.q.finish();
    // Pinned copies: neither staged nor counted as pageable copies that went direct.
    CHECK(transfer_statistics().staged_copies == before.staged_copies);
    CHECK(transfer_statistics().direct_copies == before.direct_copies);
    CHECK(f.q.read(d) == original);
    f.q.fill(d, 3.0f);
    f.q.copy(d, h);  // through the HostBuffer
    f.q.finish();
    CHECK(host == std::vector<float>(n, 3.0f));
    if (n > 8) {
      const std::size_t off = 3, len = n - 8;
      for (std::size_t i = 0; i < len; ++i) host[off + i] = static_cast<float>(i);
      f.q.copy(h.view(off, len), d.view(5, len));
      Buffer<float> tail = d.view(5, len);
      std::vector<float> back(len);
      f.q.copy(tail, back);
      f.q.finish();
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < len; ++i) wrong += back[i] != static_cast<float>(i);
      CHECK(wrong == 0);
      f.q.copy(d.view(0, 2), host.data() + 1);  // a raw pointer inside it: as many elements as the view
      f.q.finish();
      CHECK(host[1] == 3.0f);
      CHECK(host[2] == 3.0f);
    }
  }
}

TEST_CASE("device.hpp: overlapping, null and empty registrations are refused or empty as promised, and unaligned memory registers") {
  // device.hpp: "Throws invalid_argument for a null pointer with count > 0 and for a range
  // overlapping a registration or HostBuffer gpurt knows (register each range once)".
  test::Fixture f;
  std::vector<std::uint32_t> v(10007, 5u);
  HostBuffer<std::uint32_t> h = registered(f.dev, v.data(), v.size());
  if (!h.valid()) GPURT_SKIP(f.dev.description() + " cannot register host memory (refused as promised)");
  GPURT_REQUIRE_ERROR(f.dev.register_host(v.data() + 100, 10), ErrorCategory::invalid_argument, "overlaps");
  GPURT_REQUIRE_ERROR(f.dev.register_host(v.data(), v.size()), ErrorCategory::invalid_argument, "overlaps");
  HostBuffer<std::uint32_t> pinned = f.dev.alloc_host<std::uint32_t>(64);
  GPURT_REQUIRE_ERROR(f.dev.register_host(pinned.data() + 1, 8), ErrorCategory::invalid_argument, "overlaps");
  GPURT_REQUIRE_ERROR(f.dev.register_host(static_cast<std::uint32_t*>(nullptr), 4), ErrorCategory::invalid_argument,
                      "null");
  HostBuffer<std::uint32_t> none = f.dev.register_host(static_cast<std::uint32_t*>(nullptr), 0);
  CHECK(none.valid());
  CHECK(none.empty());
  h = HostBuffer<std::uint32_t>();  // the last handle: unregistered; the range may be registered again
  HostBuffer<std::uint32_t> again = f.dev.register_host(v.data() + 100, 10);
  CHECK(again.size() == 10);
  again = HostBuffer<std::uint32_t>();
  // Unaligned: a range starting at an odd byte, of an odd length.
  std::unique_ptr<unsigned char[]> raw(new unsigned char[65537 + 1]);
  unsigned char* odd = raw.get() + 1;
  for (std::size_t i = 0; i < 65537; ++i) odd[i] = static_cast<unsigned char>(i * 31);
  HostBuffer<unsigned char> u = f.dev.register_host(odd, 65537);
  Buffer<unsigned char> d = f.dev.alloc<unsigned char>(65537);
  f.q.copy(u, d);
  const std::vector<unsigned char> back = f.q.read(d);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < 65537; ++i) wrong += back[i] != static_cast<unsigned char>(i * 31);
  CHECK(wrong == 0);
}

TEST_CASE("device.hpp: read-only memory registers or is refused with a typed error, and 200 registrations come and go") {
  // device.hpp: "the driver's error where it refuses (CUDA: memory it cannot lock, a limit
  // reached)" - never a crash; and a registration's last handle "unregisters it".
  test::Fixture f;
  if (!registers(f.dev)) GPURT_SKIP(f.dev.description() + " cannot register host memory (refused as promised)");
  {
    const ReadOnlyPages ro(4);
    try {
      HostBuffer<std::uint32_t> r = f.dev.register_host(static_cast<std::uint32_t*>(ro.data), ro.bytes / 4);
      Buffer<std::uint32_t> d = f.dev.alloc<std::uint32_t>(ro.bytes / 4);
      f.q.copy(r, d);  // uploads read it
      CHECK(f.q.read(d) == std::vector<std::uint32_t>(ro.bytes / 4, 0u));
    } catch (const Error& e) {
      INFO(e.what());
      CHECK(e.category() != ErrorCategory::internal);
    }
  }
  std::vector<std::vector<double>> many(200, std::vector<double>(1021, 1.5));
  for (int round = 0; round < 2; ++round) {
    std::vector<HostBuffer<double>> regs;
    for (auto& m : many) regs.push_back(f.dev.register_host(m.data(), m.size()));
    Buffer<double> d = f.dev.alloc<double>(1021);
    f.q.copy(regs[199], d);
    CHECK(f.q.read(d) == std::vector<double>(1021, 1.5));
  }
}

TEST_CASE("device.hpp: const memory registers for uploads only - a source of copies and recordings, never a download's destination") {
  // device.hpp: "Const memory: registered for uploads only ... The HostBuffer<const T> is a source
  // of copies and recordings; a download into it does not compile, and one into a raw pointer
  // inside it is invalid_argument."
  // Every pageable copy staged (GPURT_STAGING=on), so that a registered copy taken for pageable
  // would count; and no cut-over measured in the background, whose probes count too (a 4 MB buffer
  // sets the transfer engine up: the counters moved under this case once, on the mock).
  const test::StagingGuard restore;
  set_staging(Staging::always);
  test::Fixture f;
  const std::size_t n = 4099;
  const std::vector<float> source = test::random_vector<float>(n), original = source;
  HostBuffer<const float> h = registered(f.dev, source.data(), source.size());
  if (!h.valid()) GPURT_SKIP(f.dev.description() + " cannot register host memory (refused as promised)");
  CHECK(h.data() == source.data());
  Buffer<float> d = f.dev.alloc<float>(n);
  const TransferStatistics before = transfer_statistics();
  f.q.copy(h, d);
  f.q.copy(h.view(3, n - 8), d.view(5, n - 8));
  f.q.finish();
  CHECK(transfer_statistics().staged_copies == before.staged_copies);
  std::vector<float> want = source;
  std::copy(source.begin() + 3, source.end() - 5, want.begin() + 5);
  CHECK(f.q.read(d) == want);
  // A raw pointer inside it as a destination: refused, nothing written, the queue usable.
  f.q.fill(d, 2.0f);
  GPURT_REQUIRE_ERROR(f.q.copy(d.view(0, 2), const_cast<float*>(source.data()) + 1), ErrorCategory::invalid_argument,
                      "read-only");
  f.q.finish();
  CHECK(source == original);  // untouched
  // In a recording: a source as well.
  Buffer<float> e = f.dev.alloc<float>(n);
  Recording rec(f.dev, "const upload");
  rec.copy(h, e);
  Graph g = rec.finish();
  f.q.replay(g);
  f.q.finish();
  CHECK(f.q.read(e) == source);
}

TEST_CASE("device.hpp: pages the process may only read register read-only, and then nothing downloads into them") {
  // device.hpp: "Pages the process may only read ... are registered read-only where the device
  // allows, and a download into them is invalid_argument": the device writing them would fault.
  test::Fixture f;
  if (!registers(f.dev)) GPURT_SKIP(f.dev.description() + " cannot register host memory (refused as promised)");
  const ReadOnlyPages ro(2);
  // Through the const overload, so that even a device that cannot tell the pages apart (the mock)
  // registers them read-only.
  HostBuffer<const std::uint32_t> r = f.dev.register_host(static_cast<const std::uint32_t*>(ro.data), ro.bytes / 4);
  Buffer<std::uint32_t> d = f.dev.alloc<std::uint32_t>(ro.bytes / 4);
  f.q.copy(r, d);
  CHECK(f.q.read(d) == std::vector<std::uint32_t>(ro.bytes / 4, 0u));
  GPURT_REQUIRE_ERROR(f.q.copy(d.view(0, 16), static_cast<std::uint32_t*>(ro.data) + 7), ErrorCategory::invalid_argument,
                      "read-only");
  // One that only straddles its end (the first 8 elements inside, the rest past it): refused whole,
  // before anything is written.
  GPURT_REQUIRE_ERROR(f.q.copy(d.view(0, 16), static_cast<std::uint32_t*>(ro.data) + (ro.bytes / 4 - 8)),
                      ErrorCategory::invalid_argument, "read-only");
  std::vector<std::uint32_t> mine(16, 1u);
  f.q.copy(d.view(0, 16), mine);  // the queue is usable
  f.q.finish();
  CHECK(mine == std::vector<std::uint32_t>(16, 0u));
}
