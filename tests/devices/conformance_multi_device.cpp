// Several devices in one process: Queue::copy between buffers of two devices (both ways, the queue
// on either side, views at odd offsets, sizes that are and are not multiples of the relay chunk),
// a queue of a third device refused, events recorded on one device and waited for on the other.
// Each case needs a second device: GPURT_TEST_PEER names it, else the next device of
// gpurt::devices() after the device under test; without one the case is skipped with the reason.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "fixture.hpp"

using namespace gpurt;

namespace {

// Copies `n` random elements from a fresh buffer of `from` to one of `to` with queue `q`, at element
// offsets `so` and `dso` into larger allocations, and checks the destination against the CPU: the
// copied range holds the source's values and the rest of the destination is untouched.
void round_trip(const Device& from, Queue& fq, const Device& to, Queue& tq, Queue& q, std::size_t n,
                std::size_t so, std::size_t dso) {
  INFO(n << " elements, source offset " << so << ", destination offset " << dso << ", queue on "
         << q.device().description());
  const auto src_host = test::random_vector<std::int32_t>(n + so + 3, -1000000, 1000000);
  const auto dst_host = test::random_vector<std::int32_t>(n + dso + 5, -1000000, 1000000);
  auto src = from.alloc<std::int32_t>(src_host.size());
  auto dst = to.alloc<std::int32_t>(dst_host.size());
  fq.copy(src_host, src);
  tq.copy(dst_host, dst);
  // Ordered across queues with events, as the header asks: the uploads land before the copy.
  q.wait(fq.record());
  q.wait(tq.record());
  q.copy(src.view(so, n), dst.view(dso, n));
  tq.wait(q.record());
  std::vector<std::int32_t> want = dst_host;
  for (std::size_t i = 0; i < n; ++i) want[dso + i] = src_host[so + i];
  CHECK(tq.read(dst) == want);
  CHECK(fq.read(src) == src_host);  // the source is left as it was
}

}  // namespace

TEST_CASE("queue.hpp: buffers of two different devices are copied, both ways, with the queue on either side") {
  // gpurt/queue.hpp: "Buffers of two different devices (of one backend or of two) are copied too,
  // with this queue on either buffer's device" ... "otherwise relayed through pinned host memory".
  // Sizes 0, 1, primes, and 64 MiB + 3 elements (not a multiple of the relay's chunk of a few MiB),
  // at odd element offsets on both sides.
  test::Fixture f;
  GPURT_PEER(f, peer);
  Queue pq = peer.create_queue();
  const std::size_t big = (std::size_t(64) << 20) / sizeof(std::int32_t) + 3;
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(257), std::size_t(65537),
                        std::size_t(1048583), big}) {
    const std::size_t so = n % 2 == 0 ? 3 : 1, dso = n % 2 == 0 ? 5 : 0;
    round_trip(f.dev, f.q, peer, pq, f.q, n, so, dso);  // to the peer, queue on the source's device
    round_trip(f.dev, f.q, peer, pq, pq, n, dso, so);   // to the peer, queue on the destination's device
    round_trip(peer, pq, f.dev, f.q, pq, n, so, so);    // back, queue on the source's device
    round_trip(peer, pq, f.dev, f.q, f.q, n, 1, 3);     // back, queue on the destination's device
  }
}

TEST_CASE("queue.hpp: work on the copying queue after a copy between devices sees the data") {
  // gpurt/queue.hpp: a direct copy is "ordered on this queue like any copy"; a relayed one "first
  // waits for this queue's earlier work and returns once the data is in dst". Either way the
  // queue's earlier upload lands before the copy and its later read sees the result, with no event.
  test::Fixture f;
  GPURT_PEER(f, peer);
  Queue pq = peer.create_queue();
  const std::size_t n = 1021;
  const auto h = test::random_vector<float>(n);
  auto a = f.dev.alloc<float>(n);
  auto b = peer.alloc<float>(n);
  auto c = f.dev.alloc<float>(n);
  f.q.copy(h, a);      // earlier work on the same queue
  f.q.copy(a, b);      // to the peer
  f.q.copy(b, c);      // and back, still on f.q
  CHECK(f.q.read(c) == h);
}

TEST_CASE("queue.hpp: an event of another device is waited for, then its work is seen") {
  // gpurt/queue.hpp: "Work enqueued on this queue after this call waits for `event`, which may come
  // from any queue of any device" (on the device where the backend can, else on the host).
  test::Fixture f;
  GPURT_PEER(f, peer);
  Queue pq = peer.create_queue();
  const std::size_t n = 4099;
  const auto h = test::random_vector<float>(n), g = test::random_vector<float>(n);
  auto on_peer = peer.alloc<float>(n);
  auto here = f.dev.alloc<float>(n);
  pq.copy(h, on_peer);
  f.q.wait(pq.record());  // recorded on the peer, waited for on the device under test
  f.q.copy(on_peer, here);
  CHECK(f.q.read(here) == h);
  // And the other way round.
  f.q.copy(g, here);
  pq.wait(f.q.record());
  pq.copy(here, on_peer);
  CHECK(pq.read(on_peer) == g);
}

TEST_CASE("queue.hpp: a copy between devices is checked like any copy, and the runtime works on") {
  // gpurt/queue.hpp: "device -> device; same size" and "a queue of a third device is
  // invalid_argument"; docs/errors.md: the errors of a copy between devices name both devices.
  test::Fixture f;
  GPURT_PEER(f, peer);
  Queue pq = peer.create_queue();
  const std::size_t n = 257;
  const auto h = test::random_vector<std::int32_t>(n), sentinel = test::random_vector<std::int32_t>(n);
  auto a = f.dev.alloc<std::int32_t>(n);
  auto b = peer.alloc<std::int32_t>(n);
  f.q.copy(h, a);
  pq.copy(sentinel, b);
  f.q.finish();
  // Overlapped size mismatch: views of different sizes at odd offsets.
  GPURT_REQUIRE_ERROR(f.q.copy(a.view(1, 100), b.view(3, 101)), ErrorCategory::invalid_argument,
                      "size mismatch");
  GPURT_REQUIRE_ERROR(pq.copy(b.view(3, 101), a.view(1, 100)), ErrorCategory::invalid_argument,
                      "size mismatch");
  CHECK(pq.read(b) == sentinel);  // nothing was copied
  // A queue of a third device, when there is one.
  for (const Device& third : devices()) {
    if (third == f.dev || third == peer) continue;
    INFO("third device " << third.description());
    Queue tq = third.create_queue();
    GPURT_REQUIRE_ERROR(tq.copy(a, b), ErrorCategory::invalid_argument, peer.description());
    GPURT_REQUIRE_ERROR(tq.copy(b, a), ErrorCategory::invalid_argument, f.dev.description());
    break;
  }
  CHECK(pq.read(b) == sentinel);
  // The runtime works on: the next valid copy between the two devices lands.
  // A peer copy is asynchronous on f.q: the peer's queue reads after an event of it (queue.hpp:
  // "Work of the other device ... is ordered with events"). Without the wait this read raced the
  // copy on two H200s (cuda:0 -> cuda:1).
  f.q.copy(a, b);
  pq.wait(f.q.record());
  CHECK(pq.read(b) == h);
}
