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
#include <vector>

#include "fixture.hpp"

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

}  // namespace

TEST_CASE("device.hpp: a registered std::vector copies both ways exactly, through its HostBuffer, raw pointers, ranges and odd views") {
  // device.hpp: "every copy from or to memory inside it is a pinned copy: direct and asynchronous
  // ... whether the copy names the HostBuffer or a raw pointer or range inside it".
  test::Fixture f;
  for (const std::size_t n : {std::size_t(1), std::size_t(4099), std::size_t(1000003)}) {
    std::vector<float> host = test::random_vector<float>(n);
    const std::vector<float> original = host;
    HostBuffer<float> h = registered(f.dev, host.data(), host.size());
    if (!h.valid()) GPURT_SKIP(f.dev.description() + " cannot register host memory (refused as promised)");
    CHECK(h.data() == host.data());
    CHECK(h.size() == n);
    Buffer<float> d = f.dev.alloc<float>(n);
    f.q.copy(host, d);  // a range inside the registration: pinned, asynchronous
    f.q.finish();
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
  std::vector<int> probe(4);
  if (!registered(f.dev, probe.data(), probe.size()).valid())
    GPURT_SKIP(f.dev.description() + " cannot register host memory (refused as promised)");
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  void* ro = ::mmap(nullptr, 4 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(ro != MAP_FAILED);
  try {
    HostBuffer<std::uint32_t> r = f.dev.register_host(static_cast<std::uint32_t*>(ro), 4 * page / 4);
    Buffer<std::uint32_t> d = f.dev.alloc<std::uint32_t>(4 * page / 4);
    f.q.copy(r, d);  // uploads read it
    CHECK(f.q.read(d) == std::vector<std::uint32_t>(4 * page / 4, 0u));
  } catch (const Error& e) {
    INFO(e.what());
    CHECK(e.category() != ErrorCategory::internal);
  }
  ::munmap(ro, 4 * page);
  std::vector<std::vector<double>> many(200, std::vector<double>(1021, 1.5));
  for (int round = 0; round < 2; ++round) {
    std::vector<HostBuffer<double>> regs;
    for (auto& m : many) regs.push_back(f.dev.register_host(m.data(), m.size()));
    Buffer<double> d = f.dev.alloc<double>(1021);
    f.q.copy(regs[199], d);
    CHECK(f.q.read(d) == std::vector<double>(1021, 1.5));
  }
}
