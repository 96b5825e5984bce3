// Contract cases (memory, attack): Buffer, HostBuffer, views, as<U>(), Queue copies and fills,
// Event and the queue's lifetimes, each case quoting the promise it tries to break (README.md,
// docs/api-guide.md, the public headers buffer.hpp, queue.hpp, event.hpp, device.hpp). Every case
// runs on every device the fixture gives; the ones that inject failures need the mock backend.
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <limits>
#include <thread>

#include "fixture.hpp"
#include "gpurt/graph.hpp"
#include "mock_control.hpp"

using namespace gpurt;

namespace {

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();

// 8 and 16 bytes that need only 4-byte alignment: as<U>() may start them inside an element.
struct Pair {
  float a, b;
};
struct Quad {
  float v[4];
};

}  // namespace

TEST_CASE("buffer.hpp: as<U>() of a view starting inside a U-sized element fills, copies and reads the right bytes") {
  // buffer.hpp: "as<U>() reinterprets the bytes of a view as another element type" and "The same
  // bytes seen as elements of U; the view's byte size and start must fit U": a float view at
  // element 1 (byte 4) fits Pair and Quad (4-byte alignment). queue.hpp: fill "Sets every element
  // of `dst` to `value`", and a view "is accepted wherever a Buffer is: copies, fills".
  test::Fixture f;
  for (const std::size_t k : {std::size_t(1), std::size_t(7), std::size_t(1031), std::size_t(100003)}) {
    for (const std::size_t skip : {std::size_t(1), std::size_t(2), std::size_t(3)}) {
      INFO(k << " elements, view starting at float " << skip);
      // Pairs: floats [skip, skip + 2k) of a buffer with random guards on both sides.
      const std::size_t n = 2 * k + skip + 3;
      std::vector<float> host = test::random_vector<float>(n);
      auto floats = f.dev.alloc<float>(n);
      f.q.copy(host, floats);
      const Buffer<Pair> pairs = floats.view(skip, 2 * k).as<Pair>();
      REQUIRE(pairs.size() == k);
      REQUIRE(pairs.offset_bytes() == skip * sizeof(float));
      // offset(): "rounded down where as<U>() started the view inside an element".
      CHECK(pairs.offset() == skip * sizeof(float) / sizeof(Pair));
      const Pair value{1.5f, -2.25f};
      f.q.fill(pairs, value);
      for (std::size_t i = 0; i < k; ++i) {
        host[skip + 2 * i] = value.a;
        host[skip + 2 * i + 1] = value.b;
      }
      CHECK(f.q.read(floats) == host);
      // A copy into the same view from fresh data, read back through it and through the floats.
      std::vector<Pair> in(k);
      const std::vector<float> r = test::random_vector<float>(2 * k);
      std::memcpy(in.data(), r.data(), r.size() * sizeof(float));
      f.q.copy(in, pairs);
      std::copy(r.begin(), r.end(), host.begin() + static_cast<std::ptrdiff_t>(skip));
      CHECK(f.q.read(floats) == host);
      const std::vector<Pair> out = f.q.read(pairs);
      REQUIRE(out.size() == k);
      CHECK(std::memcmp(out.data(), in.data(), k * sizeof(Pair)) == 0);
      // Quads at the same start: 16-byte elements at a 4-, 8- or 12-byte offset.
      const std::size_t quads = k / 2 + 1;
      auto wide = f.dev.alloc<float>(4 * quads + skip + 1);
      std::vector<float> wide_host = test::random_vector<float>(wide.size());
      f.q.copy(wide_host, wide);
      const Quad q4{{3.0f, -4.0f, 5.5f, 0.0f}};
      f.q.fill(wide.view(skip, 4 * quads).as<Quad>(), q4);
      for (std::size_t i = 0; i < quads; ++i) std::copy(q4.v, q4.v + 4, wide_host.begin() + static_cast<std::ptrdiff_t>(skip + 4 * i));
      CHECK(f.q.read(wide) == wide_host);
    }
  }
}

TEST_CASE("api-guide.md: a recorded fill of an as<U>() view starting inside an element replays like Queue::fill") {
  // api-guide.md: a Recording "takes the calls a Queue takes - launch, copy, fill, wait(event)";
  // graph.hpp: fill "Sets every element of `dst` to `value`; sizeof(T) as for Queue::fill". The
  // view of the case above (8-byte pairs from byte 4) recorded once and replayed twice.
  test::Fixture f;
  for (const std::size_t k : {std::size_t(1), std::size_t(5003)}) {
    INFO(k << " pairs");
    const std::size_t n = 2 * k + 3;
    std::vector<float> host = test::random_vector<float>(n);
    auto floats = f.dev.alloc<float>(n);
    f.q.copy(host, floats);
    const Pair value{-0.5f, 8.0f};
    Recording rec(f.dev, "unaligned fill");
    rec.fill(floats.view(1, 2 * k).as<Pair>(), value);
    const Graph g = rec.finish();
    f.q.replay(g);
    for (std::size_t i = 0; i < k; ++i) {
      host[1 + 2 * i] = value.a;
      host[2 + 2 * i] = value.b;
    }
    CHECK(f.q.read(floats) == host);
    f.q.fill(floats, 0.0f);
    f.q.replay(g);
    std::vector<float> again(n, 0.0f);
    for (std::size_t i = 0; i < k; ++i) {
      again[1 + 2 * i] = value.a;
      again[2 + 2 * i] = value.b;
    }
    CHECK(f.q.read(floats) == again);
  }
}

TEST_CASE("api-guide.md: a fill of an as<U>() view starting inside an element runs whole while another thread copies on the queue") {
  // api-guide.md, "Threads": "a queue takes commands from any number of threads and runs each
  // whole, in the order they were enqueued". On OpenCL such a fill is several commands (the pattern
  // written once, then doubled by copies); another thread's copy of the same bytes on the same
  // queue must see the fill before it or after it, never half of it. One thread fills 64 Ki pairs
  // (from byte 4) with two patterns in turn; the other copies the view and reads the copy: every
  // snapshot holds one pattern throughout.
  test::Fixture f;
  constexpr std::size_t k = 64 * 1024;
  constexpr int rounds = 100;
  auto floats = f.dev.alloc<float>(2 * k + 2);
  const Buffer<Pair> pairs = floats.view(1, 2 * k).as<Pair>();
  const Pair p1{1.0f, 2.0f}, p2{-3.0f, -4.0f};
  f.q.fill(pairs, p1);
  f.q.finish();
  std::string torn;  // the first snapshot that mixed the patterns, described
  // The filler waits for each fill (a one-element read), so both threads keep enqueueing while the
  // device works, and the copies fall at every point of the fills' enqueueing.
  std::thread filler([&] {
    const Buffer<float> probe = floats.view(0, 1);
    for (int r = 0; r < 4 * rounds; ++r) {
      f.q.fill(pairs, r % 2 ? p1 : p2);
      (void)f.q.read(probe);
    }
  });
  try {
    auto snapshot = f.dev.alloc<Pair>(k);
    for (int r = 0; r < rounds && torn.empty(); ++r) {
      f.q.copy(pairs, snapshot);
      const std::vector<Pair> got = f.q.read(snapshot);
      const Pair first = got[0];
      std::size_t other = 0;
      for (const Pair& x : got) other += std::memcmp(&x, &first, sizeof x) != 0;
      const bool known = std::memcmp(&first, &p1, sizeof first) == 0 || std::memcmp(&first, &p2, sizeof first) == 0;
      if (other != 0 || !known)
        torn = "round " + std::to_string(r) + ": " + std::to_string(other) + " of " + std::to_string(k) +
               " pairs differ from the first (" + std::to_string(first.a) + ", " + std::to_string(first.b) + ")";
    }
  } catch (...) {
    filler.join();
    throw;
  }
  filler.join();
  f.q.finish();
  INFO(torn);
  CHECK(torn.empty());
}

TEST_CASE("buffer.hpp: view() of an as<U>() view counts elements of U from where the reinterpreted view starts") {
  // buffer.hpp: view(offset, count) is "The sub-range [offset, offset + count) of this buffer,
  // sharing its memory"; offset() is the "Start of this view, in elements of T from the start of its
  // allocation"; overlaps is true for "views of one allocation (through view() or as<U>()) whose
  // byte ranges intersect".
  test::Fixture f;
  auto bytes = f.dev.alloc<std::uint8_t>(64);
  std::vector<std::uint8_t> host = test::random_vector<std::uint8_t>(64, 0, 255);
  f.q.copy(host, bytes);
  const Buffer<std::uint32_t> words = bytes.view(4, 40).as<std::uint32_t>();
  CHECK(words.size() == 10);
  CHECK(words.offset() == 1);
  CHECK(words.offset_bytes() == 4);
  const Buffer<std::uint32_t> part = words.view(3, 5);  // bytes [16, 36)
  CHECK(part.offset() == 4);
  CHECK(part.offset_bytes() == 16);
  CHECK(part.size_bytes() == 20);
  const auto in = test::random_vector<std::uint32_t>(5, 0, 1u << 30);
  f.q.copy(in, part);
  std::memcpy(host.data() + 16, in.data(), 20);
  CHECK(f.q.read(bytes) == host);
  CHECK(f.q.read(part) == in);
  // Back to bytes: the same 20 bytes at byte 16.
  const Buffer<std::uint8_t> again = part.as<std::uint8_t>();
  CHECK(again.offset_bytes() == 16);
  CHECK(again.size() == 20);
  CHECK(part.overlaps(bytes.view(35, 1)));
  CHECK(!part.overlaps(bytes.view(36, 1)));
  CHECK(!part.overlaps(bytes.view(15, 1)));
  CHECK(part.overlaps(again));
  // A view past the reinterpreted view's end is refused, though the allocation goes on.
  GPURT_REQUIRE_ERROR(words.view(8, 3), ErrorCategory::invalid_argument, "outside");
  CHECK(f.q.read(words.view(8, 2)).size() == 2);
}

TEST_CASE("api-guide.md: a view whose offset + count overflows size_t is invalid_argument, for Buffer and HostBuffer") {
  // api-guide.md: "Views out of range ... are invalid_argument errors naming the call"; buffer.hpp:
  // HostBuffer::view "Throws invalid_argument when the range is not inside this HostBuffer".
  // Offsets and counts near 2^64 must not wrap around to a small range.
  test::Fixture f;
  const std::size_t n = 13;
  auto x = f.dev.alloc<float>(n);
  for (const auto& [off, count] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, size_max}, {size_max, 1}, {size_max, 0}, {n + 1, 0}, {2, size_max - 1}, {size_max / 4 + 1, 4}}) {
    INFO("view(" << off << ", " << count << ")");
    GPURT_REQUIRE_ERROR(x.view(off, count), ErrorCategory::invalid_argument, "Buffer::view");
    GPURT_REQUIRE_ERROR(x.view(3, 5).view(off, count), ErrorCategory::invalid_argument, "outside");
  }
  HostBuffer<float> h = f.dev.alloc_host<float>(n);
  for (const auto& [off, count] : std::vector<std::pair<std::size_t, std::size_t>>{
           {1, size_max}, {size_max, 1}, {size_max, 0}, {n + 1, 0}, {2, size_max - 1}}) {
    INFO("HostBuffer view(" << off << ", " << count << ")");
    GPURT_REQUIRE_ERROR(h.view(off, count), ErrorCategory::invalid_argument, "HostBuffer::view");
  }
  // The end itself is a valid empty view, of both kinds.
  CHECK(x.view(n, 0).empty());
  CHECK(x.view(n, 0).valid());
  CHECK(h.view(n, 0).empty());
  CHECK(h.view(n, 0).valid());
  // The buffer and the runtime work on.
  const auto data = test::random_vector<float>(n);
  std::copy(data.begin(), data.end(), h.begin());
  f.q.copy(h, x);
  f.q.finish();
  CHECK(f.q.read(x) == data);
}

TEST_CASE("device.hpp: alloc and alloc_host of more elements than size_t bytes can count are invalid_argument") {
  // api-guide.md: every bad input is a typed error, "Nothing is enqueued when a check fails, and
  // the next valid call works"; an element count whose byte size does not fit a size_t must never
  // wrap around to a small allocation.
  test::Fixture f;
  const MemoryUsage before = f.dev.memory_usage();
  GPURT_REQUIRE_ERROR(f.dev.alloc<double>(size_max / 8 + 1), ErrorCategory::invalid_argument, "overflow");
  GPURT_REQUIRE_ERROR(f.dev.alloc<std::uint64_t>(size_max), ErrorCategory::invalid_argument, "Device::alloc");
  GPURT_REQUIRE_ERROR(f.dev.alloc<Quad>((size_max >> 4) + 2), ErrorCategory::invalid_argument, "overflow");
  GPURT_REQUIRE_ERROR(f.dev.alloc_host<float>(size_max / 2), ErrorCategory::invalid_argument, "Device::alloc_host");
  // The largest count that does not overflow asks for more than any device has: out of memory.
  GPURT_REQUIRE_ERROR(f.dev.alloc<std::uint8_t>(size_max), ErrorCategory::out_of_device_memory, "cannot allocate");
  // errors.md: "A pinned host allocation (Device::alloc_host) that fails is out_of_host_memory on
  // every backend, never out_of_device_memory" - also when no host could ever hold it (4 EiB).
  GPURT_REQUIRE_ERROR(f.dev.alloc_host<std::uint8_t>(std::size_t(1) << 62), ErrorCategory::out_of_host_memory,
                      "out_of_host_memory");
  HostBuffer<double> pinned = f.dev.alloc_host<double>(7);
  CHECK(pinned.size() == 7);
  const MemoryUsage after = f.dev.memory_usage();
  CHECK(after.gpurt_bytes == before.gpurt_bytes);
  CHECK(after.gpurt_buffers == before.gpurt_buffers);
  const auto data = test::random_vector<double>(31);
  auto b = f.dev.alloc<double>(data.size());
  f.q.copy(data, b);
  CHECK(f.q.read(b) == data);
}

TEST_CASE("queue.hpp: device copies inside one allocation: disjoint views copy, overlapping ones are refused, through as<U>() too") {
  // queue.hpp: "device -> device; same size; views of one allocation may overlap only if equal";
  // "Every call validates its arguments first and throws Error without enqueueing anything".
  test::Fixture f;
  const std::size_t n = 97;
  std::vector<float> host = test::random_vector<float>(n);
  auto x = f.dev.alloc<float>(n);
  f.q.copy(host, x);
  // Adjacent views (they touch but share no byte) copy.
  f.q.copy(x.view(3, 41), x.view(44, 41));
  std::copy(host.begin() + 3, host.begin() + 44, host.begin() + 44);
  CHECK(f.q.read(x) == host);
  // Overlapping by one element, either way round, and through a byte view of the same memory.
  GPURT_REQUIRE_ERROR(f.q.copy(x.view(3, 42), x.view(44, 42)), ErrorCategory::invalid_argument, "overlap");
  GPURT_REQUIRE_ERROR(f.q.copy(x.view(44, 42), x.view(3, 42)), ErrorCategory::invalid_argument, "overlap");
  const Buffer<std::uint8_t> xb = x.as<std::uint8_t>();
  GPURT_REQUIRE_ERROR(f.q.copy(xb.view(1, 8), xb.view(8, 8)), ErrorCategory::invalid_argument, "overlap");
  GPURT_REQUIRE_ERROR(f.q.copy(xb.view(0, 4 * 10), x.view(5, 10).as<std::uint8_t>()), ErrorCategory::invalid_argument,
                      "overlap");
  // Nothing was copied by the refused calls.
  CHECK(f.q.read(x) == host);
  // The same view onto itself is allowed and changes nothing; so is the same bytes seen as bytes.
  f.q.copy(x.view(10, 20), x.view(10, 20));
  f.q.copy(x.view(10, 20).as<std::uint8_t>(), xb.view(40, 80));
  CHECK(f.q.read(x) == host);
  // Disjoint byte views at odd byte offsets copy exactly their bytes.
  std::vector<std::uint8_t> bytes(n * sizeof(float));
  std::memcpy(bytes.data(), host.data(), bytes.size());
  f.q.copy(xb.view(1, 13), xb.view(101, 13));
  std::memmove(bytes.data() + 101, bytes.data() + 1, 13);
  CHECK(f.q.read(xb) == bytes);
}

TEST_CASE("api-guide.md: a pageable source may be overwritten as soon as each copy returns, over thousands of copies") {
  // api-guide.md: "A copy from or to ordinary (pageable) host memory ... is blocking for the host
  // side, on every backend and every path (direct or staged): an upload returns once the source
  // may be overwritten". One variable, changed after each call, copied into successive elements:
  // more copies (5003) and sizes (1 element to past the staging cut-over) than any private
  // buffering of small uploads could hold.
  test::Fixture f;
  const std::size_t n = 5003;
  auto x = f.dev.alloc<float>(n);
  std::vector<float> expect(n);
  float one = 0;
  for (std::size_t i = 0; i < n; ++i) {
    one = static_cast<float>(i) * 0.5f - 7.0f;
    expect[i] = one;
    f.q.copy(&one, x.view(i, 1));
    one = -1.0f;  // overwritten at once
  }
  CHECK(f.q.read(x) == expect);
  // One vector reused for copies of growing sizes into views at odd offsets; each overwritten
  // right after its copy returns.
  const std::size_t big = (5u << 20) / sizeof(float) + 3;  // past the 4 MiB default staging line
  auto y = f.dev.alloc<float>(big + 5);
  std::vector<float> src;
  for (const std::size_t count : {std::size_t(1), std::size_t(2047), std::size_t(2049), std::size_t(65537), big}) {
    INFO(count << " floats");
    src = test::random_vector<float>(count);
    const std::vector<float> want = src;
    f.q.copy(src, y.view(5, count));
    std::fill(src.begin(), src.end(), 0.0f);
    src.clear();
    src.shrink_to_fit();  // freed: a copy still reading it would read freed memory
    CHECK(f.q.read(y.view(5, count)) == want);
  }
}

TEST_CASE("queue.hpp: pinned memory may be reused once an event recorded after its copy has completed") {
  // queue.hpp: "Pinned memory (HostBuffer ...) is copied asynchronously: it must stay valid and
  // unchanged (uploads) or unread (downloads) until the work has completed (finish(), or an event
  // recorded after it)". So after Event::wait() the upload has read it and the download has
  // landed, in views at odd offsets and sizes 1 and primes.
  test::Fixture f;
  for (const std::size_t count : {std::size_t(1), std::size_t(13), std::size_t(65537)}) {
    INFO(count << " elements");
    const std::size_t off = 3;
    HostBuffer<float> h = f.dev.alloc_host<float>(count + off + 2);
    auto x = f.dev.alloc<float>(count + 1), y = f.dev.alloc<float>(count + 1);
    const auto first = test::random_vector<float>(count), second = test::random_vector<float>(count);
    std::copy(first.begin(), first.end(), h.begin() + off);
    f.q.copy(h.view(off, count), x.view(1, count));
    const Event uploaded = f.q.record();
    uploaded.wait();
    CHECK(uploaded.complete());
    std::copy(second.begin(), second.end(), h.begin() + off);  // reused for the next upload
    f.q.copy(h.view(off, count), y.view(1, count));
    f.q.finish();
    CHECK(f.q.read(x.view(1, count)) == first);
    CHECK(f.q.read(y.view(1, count)) == second);
    // Download into the view, then read it after the event only.
    std::fill(h.begin(), h.end(), -9.0f);
    f.q.copy(x.view(1, count), h.view(off, count));
    const Event downloaded = f.q.record();
    downloaded.wait(std::chrono::seconds(60));
    CHECK(std::equal(first.begin(), first.end(), h.begin() + off));
    CHECK(h[off - 1] == -9.0f);
    CHECK(h[off + count] == -9.0f);
  }
}

TEST_CASE("api-guide.md: an empty HostBuffer is valid and copies to and from empty views, and its sizes are checked") {
  // api-guide.md: "n == 0 is a valid empty buffer"; "empty() means zero elements ... and exists
  // only on Buffer and HostBuffer"; HostBuffer "size must equal the buffer view's" else
  // invalid_argument ("size mismatch") and nothing is copied.
  test::Fixture f;
  HostBuffer<float> none = f.dev.alloc_host<float>(0);
  CHECK(none.valid());
  CHECK(none.empty());
  CHECK(none.size_bytes() == 0);
  CHECK(none.begin() == none.end());
  CHECK(none.view(0, 0).valid());
  GPURT_REQUIRE_ERROR(none.view(0, 1), ErrorCategory::invalid_argument, "HostBuffer::view");
  auto x = f.dev.alloc<float>(9);
  const auto data = test::random_vector<float>(9);
  f.q.copy(data, x);
  f.q.copy(none, x.view(4, 0));
  f.q.copy(x.view(9, 0), none);
  f.q.copy(none, f.dev.alloc<float>(0));
  GPURT_REQUIRE_ERROR(f.q.copy(none, x.view(4, 1)), ErrorCategory::invalid_argument, "size mismatch");
  HostBuffer<float> three = f.dev.alloc_host<float>(3);
  std::fill(three.begin(), three.end(), 42.0f);
  GPURT_REQUIRE_ERROR(f.q.copy(three, x.view(0, 4)), ErrorCategory::invalid_argument, "size mismatch");
  GPURT_REQUIRE_ERROR(f.q.copy(x.view(0, 2), three), ErrorCategory::invalid_argument, "size mismatch");
  f.q.finish();
  CHECK(three[0] == 42.0f);
  CHECK(f.q.read(x) == data);
  // A moved-from HostBuffer is not valid; copies and views of it are refused naming it.
  HostBuffer<float> moved = std::move(three);
  CHECK(!three.valid());  // NOLINT(bugprone-use-after-move): the promise is about moved-from handles
  GPURT_REQUIRE_ERROR(three.view(0, 0), ErrorCategory::invalid_argument, "HostBuffer");
  // "every call throws": a copy from or into the moved-from handle must not reach the memory it
  // gave away (nor a default-constructed one an empty view), whatever its stale size says.
  f.q.copy(x.view(0, 3), moved);
  f.q.finish();
  const std::vector<float> seen(moved.begin(), moved.end());
  GPURT_REQUIRE_ERROR(f.q.copy(three, x.view(6, three.size())), ErrorCategory::invalid_argument, "HostBuffer");
  GPURT_REQUIRE_ERROR(f.q.copy(x.view(3, three.size()), three), ErrorCategory::invalid_argument, "HostBuffer");
  GPURT_REQUIRE_ERROR(f.q.read(x.view(3, three.size()), three), ErrorCategory::invalid_argument, "HostBuffer");
  const HostBuffer<float> never;
  GPURT_REQUIRE_ERROR(f.q.copy(never, x.view(2, 0)), ErrorCategory::invalid_argument, "HostBuffer");
  GPURT_REQUIRE_ERROR(f.q.copy(x.view(2, 0), never), ErrorCategory::invalid_argument, "HostBuffer");
  f.q.finish();
  CHECK(std::vector<float>(moved.begin(), moved.end()) == seen);
  CHECK(f.q.read(x) == data);
  std::fill(moved.begin(), moved.end(), 42.0f);
  f.q.copy(moved, x.view(6, 3));
  f.q.finish();
  CHECK(f.q.read(x.view(6, 3)) == std::vector<float>(3, 42.0f));
}

TEST_CASE("event.hpp: an event outlives its queue: wait, complete, device and elapsed_ms still work") {
  // event.hpp: "An Event completes when everything enqueued on its queue before it has
  // completed"; Event is a handle, valid() "true for an event from Queue::record". Nothing says
  // the queue must outlive it.
  test::Fixture f;
  const auto data = test::random_vector<float>(100003);
  auto x = f.dev.alloc<float>(data.size());
  Event start, end;
  {
    Queue q = f.dev.create_queue();
    start = q.record();
    q.copy(data, x);
    q.fill(x.view(7, 11), 3.0f);
    end = q.record();
  }  // the queue's last handle goes here
  end.wait();
  CHECK(end.complete());
  CHECK(start.complete());
  CHECK(end.device() == f.dev);
  const double ms = elapsed_ms(start, end);
  CHECK(std::isfinite(ms));
  CHECK(ms >= 0.0);
  std::vector<float> want = data;
  std::fill(want.begin() + 7, want.begin() + 18, 3.0f);
  CHECK(f.q.read(x) == want);
}

TEST_CASE("event.hpp: the longest timeouts wait like the untimed forms, and the most negative is invalid_argument") {
  // event.hpp: "a timeout too long" is not a documented error: wait(timeout) "Blocks the calling
  // thread until the event has completed or `timeout` has passed"; "A zero timeout only checks; a
  // negative one is invalid_argument". nanoseconds::max() must not overflow into the past.
  test::Fixture f;
  auto x = f.dev.alloc<float>(4099);
  f.q.fill(x, 2.0f);
  const Event e = f.q.record();
  e.wait(std::chrono::nanoseconds::max());
  CHECK(e.complete());
  f.q.finish(std::chrono::nanoseconds::max());
  f.q.finish(std::chrono::hours(24 * 365 * 100));
  GPURT_REQUIRE_ERROR(e.wait(std::chrono::nanoseconds::min()), ErrorCategory::invalid_argument, "negative");
  GPURT_REQUIRE_ERROR(f.q.finish(std::chrono::nanoseconds::min()), ErrorCategory::invalid_argument, "negative");
  GPURT_REQUIRE_ERROR(e.wait(std::chrono::nanoseconds(-1)), ErrorCategory::invalid_argument, "negative");
  // The event and the queue are usable after the refusals; a completed event's zero-timeout check
  // succeeds; the time from an event to itself is zero.
  e.wait(std::chrono::nanoseconds(0));
  CHECK(elapsed_ms(e, e) == 0.0);
  CHECK(f.q.read(x) == std::vector<float>(4099, 2.0f));
}

TEST_CASE("queue.hpp: an empty Event is refused by every call that takes one, naming the call") {
  // api-guide.md: on a default-constructed or moved-from handle "every call throws
  // invalid_argument naming the handle type or the call"; the runtime stays usable.
  test::Fixture f;
  const Event none;
  CHECK(!none.valid());
  GPURT_REQUIRE_ERROR(none.complete(), ErrorCategory::invalid_argument, "Event");
  GPURT_REQUIRE_ERROR(none.device(), ErrorCategory::invalid_argument, "Event");
  GPURT_REQUIRE_ERROR(f.q.wait(none), ErrorCategory::invalid_argument, "Queue::wait");
  const Event real = f.q.record();
  GPURT_REQUIRE_ERROR(elapsed_ms(real, none), ErrorCategory::invalid_argument, "elapsed_ms");
  GPURT_REQUIRE_ERROR(elapsed_ms(none, real), ErrorCategory::invalid_argument, "elapsed_ms");
  Event moved = f.q.record();
  const Event taken = std::move(moved);
  CHECK(!moved.valid());  // NOLINT(bugprone-use-after-move)
  GPURT_REQUIRE_ERROR(moved.wait(), ErrorCategory::invalid_argument, "Event");
  f.q.wait(taken);
  taken.wait();
  CHECK(std::isfinite(elapsed_ms(real, taken)));
}

#ifdef GPURT_MOCK_PLUGIN
TEST_CASE("queue.hpp: keep_until_finished is not released by a finish that fails, and a later finish releases it") {
  // queue.hpp: keep_until_finished "keeps `object` alive until the work enqueued so far can no
  // longer use it: it is released at the next successful finish() (or finish with a timeout that
  // does not time out)". A failed finish is not successful: the object must stay.
  test::Fixture f;
  if (f.dev.properties().backend != "mock") GPURT_SKIP("failures are injected by the mock backend");
  test::MockControl m = test::MockControl::get();
  REQUIRE(m);
  auto kept = std::make_shared<int>(7);
  const std::weak_ptr<int> watch = kept;
  f.q.keep_until_finished(std::move(kept));
  REQUIRE(m.fail(GPURT_MOCK_OP_FINISH, 0, 1) == 0);
  try {
    f.q.finish();
    FAIL("the injected finish failure was not reported");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::internal);
    CHECK(!e.call().empty());
  }
  CHECK(!watch.expired());
  // "or finish with a timeout that does not time out": one that fails (its marker event cannot be
  // recorded) does not release either.
  REQUIRE(m.fail(GPURT_MOCK_OP_RECORD, 0, 1) == 0);
  GPURT_REQUIRE_ERROR(f.q.finish(std::chrono::seconds(10)), ErrorCategory::internal, "record");
  CHECK(!watch.expired());
  f.q.finish(std::chrono::seconds(10));
  CHECK(watch.expired());
  // A failed record is a typed error too, and the next record gives a usable event.
  REQUIRE(m.fail(GPURT_MOCK_OP_RECORD, 0, 1) == 0);
  GPURT_REQUIRE_ERROR(f.q.record(), ErrorCategory::internal, "record");
  const Event e = f.q.record();
  e.wait();
  CHECK(e.complete());
  m.reset();
}

TEST_CASE("queue.hpp: a queue whose last handle goes while its finish fails neither throws nor leaks what it keeps") {
  // queue.hpp: keep_until_destroyed "is released when the last handle to the queue goes, after the
  // queue's work has completed (the destructor waits for it, and never throws)"; api-guide.md: "No
  // destructor throws". With the device's finish failing, the queue still goes quietly, releases
  // what it kept, and the device gives a working queue next.
  test::Fixture f;
  if (f.dev.properties().backend != "mock") GPURT_SKIP("failures are injected by the mock backend");
  test::MockControl m = test::MockControl::get();
  REQUIRE(m);
  const gpurt_mock_counters before = m.now();
  std::weak_ptr<int> kept_watch, finished_watch;
  {
    Queue q = f.dev.create_queue();
    auto a = std::make_shared<int>(1), b = std::make_shared<int>(2);
    kept_watch = a;
    finished_watch = b;
    q.keep_until_destroyed(std::move(a));
    q.keep_until_finished(std::move(b));
    auto x = f.dev.alloc<float>(5);
    q.fill(x, 1.0f);
    REQUIRE(m.fail(GPURT_MOCK_OP_FINISH, 0, 100) == 0);
  }  // must not throw (std::terminate would end the test binary)
  m.reset();
  CHECK(kept_watch.expired());
  CHECK(finished_watch.expired());
  const gpurt_mock_counters after = m.now();
  CHECK(after.destroyed[GPURT_MOCK_QUEUE] - before.destroyed[GPURT_MOCK_QUEUE] == 1);
  Queue next = f.dev.create_queue();
  auto y = f.dev.alloc<float>(3);
  const auto data = test::random_vector<float>(3);
  next.copy(data, y);
  CHECK(next.read(y) == data);
}

TEST_CASE("api-guide.md: a failed copy or fill is a typed error naming the call, and the next one works") {
  // api-guide.md: "Every failure is a gpurt::Error with category(), message() and details()
  // (backend, native code and name, failing call, device ...)... the next valid call works."
  test::Fixture f;
  if (f.dev.properties().backend != "mock") GPURT_SKIP("failures are injected by the mock backend");
  test::MockControl m = test::MockControl::get();
  REQUIRE(m);
  const auto data = test::random_vector<float>(17);
  auto x = f.dev.alloc<float>(data.size());
  f.q.copy(data, x);
  REQUIRE(m.fail(GPURT_MOCK_OP_FILL, 0, 1) == 0);
  GPURT_REQUIRE_ERROR(f.q.fill(x.view(3, 5), 0.0f), ErrorCategory::internal, "mockFill");
  REQUIRE(m.fail(GPURT_MOCK_OP_COPY, 0, 1) == 0);
  std::vector<float> out(data.size(), -1.0f);
  GPURT_REQUIRE_ERROR(f.q.copy(x, out), ErrorCategory::internal, "mockCopy");
  CHECK(out == std::vector<float>(data.size(), -1.0f));
  REQUIRE(m.fail(GPURT_MOCK_OP_COPY, 0, 1) == 0);
  auto y = f.dev.alloc<float>(data.size());
  try {
    f.q.copy(x, y);
    FAIL("the injected copy failure was not reported");
  } catch (const Error& e) {
    CHECK(e.category() == ErrorCategory::internal);
    CHECK(e.details().device.find(f.dev.selector()) != std::string::npos);
    CHECK(!e.details().backend.empty());
  }
  m.reset();
  f.q.copy(x, y);
  CHECK(f.q.read(y) == data);
  f.q.fill(y.view(3, 5), 0.0f);
  std::vector<float> want = data;
  std::fill(want.begin() + 3, want.begin() + 8, 0.0f);
  CHECK(f.q.read(y) == want);
}
#endif
