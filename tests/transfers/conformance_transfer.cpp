// The transfer engine: staged copies between pageable host memory and the device.
#include <cstdint>
#include <thread>

#include "fixture.hpp"
#include "gpurt/library.hpp"

using namespace gpurt;

namespace {
struct StagingMode {
  explicit StagingMode(Staging m) : saved(staging()) { set_staging(m); }
  ~StagingMode() { set_staging(saved); }
  Staging saved;
};
}  // namespace

TEST_CASE("transfer engine: staged copies round trip at awkward sizes and offsets") {
  // transfer.hpp: a staged copy moves its data in chunks of staging_chunk_bytes() through pinned
  // staging buffers. Sizes on each side of a chunk boundary, and of a 256 KiB download piece.
  test::Fixture f;
  StagingMode always(Staging::always);
  const std::size_t chunk = staging_chunk_bytes();
  REQUIRE(chunk >= (1u << 20));
  const std::size_t piece = 256u << 10;
  for (std::size_t bytes : {std::size_t(1), std::size_t(4095), piece - 1, piece + 1, chunk - 1, chunk, chunk + 1,
                            2 * chunk - 1, 3 * chunk + 17, 5 * chunk + 5}) {
    INFO("bytes = " << bytes);
    const auto in = test::random_vector<std::uint8_t>(bytes, 0, 255);
    auto buf = f.dev.alloc<std::uint8_t>(bytes + 100);
    const auto before = transfer_statistics();
    f.q.copy(in.data(), buf.view(37, bytes));
    std::vector<std::uint8_t> out(bytes);
    f.q.copy(buf.view(37, bytes), out.data());
    const auto after = transfer_statistics();
    CHECK(after.staged_copies == before.staged_copies + 2);
    CHECK(after.staged_bytes == before.staged_bytes + 2 * bytes);
    std::size_t wrong = 0, first = bytes;
    for (std::size_t i = 0; i < bytes; ++i)
      if (out[i] != in[i]) first = std::min(first, i), ++wrong;
    INFO("first wrong byte " << first);
    CHECK(wrong == 0);
  }
}

TEST_CASE("transfer engine: staged copies keep the queue's order") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  StagingMode always(Staging::always);
  const std::size_t n = (9u << 20) / 4 + 3;
  const auto in = test::random_vector<float>(n);
  auto buf = f.dev.alloc<float>(n);
  f.q.fill(buf, 5.0f);
  f.q.copy(in, buf);  // after the fill
  lib::axpy(f.q, 1.0f, buf, buf);  // buf = 2 * in
  std::vector<float> out(n);
  f.q.copy(buf, out);  // after the kernel
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += out[i] != 2.0f * in[i];
  CHECK(wrong == 0);
}

TEST_CASE("transfer engine: several threads with their own queues share it safely") {
  test::Fixture f;
  StagingMode always(Staging::always);
  const std::size_t n = (9u << 20) / 4 + 11;
  std::vector<std::vector<std::int32_t>> inputs;
  for (int t = 0; t < 4; ++t) inputs.push_back(test::random_vector<std::int32_t>(n));
  std::vector<std::string> errors(4);
  std::vector<std::size_t> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      try {
        Queue q = f.dev.create_queue();
        auto buf = f.dev.alloc<std::int32_t>(n);
        for (int round = 0; round < 3; ++round) {
          q.copy(inputs[t], buf);
          std::vector<std::int32_t> out(n);
          q.copy(buf, out);
          for (std::size_t i = 0; i < n; ++i) wrong[t] += out[i] != inputs[t][i];
        }
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) {
    INFO(errors[t]);
    CHECK(errors[t].empty());
    CHECK(wrong[t] == 0);
  }
}

TEST_CASE("transfer engine: automatic and never modes copy correctly and are counted") {
  test::Fixture f;
  const std::size_t n = (24u << 20) / 4;
  const auto in = test::random_vector<std::uint32_t>(n, 0, 0xffffffffu);
  auto buf = f.dev.alloc<std::uint32_t>(n);
  {
    StagingMode never(Staging::never);
    const auto before = transfer_statistics();
    f.q.write(in, buf);
    CHECK(f.q.read(buf) == in);
    CHECK(transfer_statistics().direct_copies == before.direct_copies + 2);
    CHECK(transfer_statistics().staged_copies == before.staged_copies);
  }
  StagingMode automatic(Staging::automatic);
  f.q.fill(buf, 0u);
  f.q.write(in, buf);
  CHECK(f.q.read(buf) == in);
  auto pinned = f.dev.alloc_host<std::uint32_t>(n);
  const auto before = transfer_statistics();
  f.q.copy(buf, pinned);
  f.q.finish();
  CHECK(transfer_statistics().staged_copies == before.staged_copies);  // pinned memory goes direct
  CHECK(std::equal(pinned.begin(), pinned.end(), in.begin()));
  StagingMode always(Staging::always);
  f.q.copy(pinned.data() + 5, buf.view(5, 1000));  // a raw pointer into pinned memory
  f.q.finish();
  CHECK(transfer_statistics().staged_copies == before.staged_copies);
}
