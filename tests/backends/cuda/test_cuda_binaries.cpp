// CUDA-only inputs: a fatbin made by nvcc at build time, loaded through Device::build(cubin).
#include <fstream>
#include <sstream>

#include "harness.hpp"

using namespace gpurt;

TEST_CASE("a fatbin built by nvcc loads and runs") {
  const Device dev = test::device_under_test();
  if (dev.backend() != "cuda") GPURT_SKIP("binary CUDA input needs a CUDA device");
  std::ifstream in(GPURT_TEST_FATBIN, std::ios::binary);
  REQUIRE(in);
  std::stringstream bytes;
  bytes << in.rdbuf();
  Program p = dev.build({SourceLanguage::cubin, bytes.str(), "write_index.fatbin"});
  Kernel k = p.kernel("write_index");
  CHECK(k.arg_count() == 2);
  Queue q = dev.create_queue();
  for (std::size_t n : {1u, 97u, 100003u}) {
    auto out = dev.alloc<unsigned>(n);
    q.launch(k, LaunchConfig::cover(k, n), out, static_cast<unsigned>(n));
    const auto r = q.read(out);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i) wrong += r[i] != i * 3u + 1u;
    CHECK(wrong == 0);
  }
}

TEST_CASE("bytes that are not a CUDA binary fail to build with a reason") {
  const Device dev = test::device_under_test();
  if (dev.backend() != "cuda") GPURT_SKIP("binary CUDA input needs a CUDA device");
  GPURT_REQUIRE_ERROR(dev.build({SourceLanguage::cubin, std::string(64, 'x'), "garbage.cubin"}),
                      ErrorCategory::build_failed, "garbage.cubin");
}
