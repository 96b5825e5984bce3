// Programs and kernels: builds, build failures with logs, kernel lookup, languages.
#include <algorithm>

#include "fixture.hpp"

using namespace gpurt;

TEST_CASE("a program lists its kernels and finds them by name") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::suite_kernels);
  Program p = f.program();
  const auto names = p.kernel_names();
  for (const char* k : {"vector_add", "empty_kernel", "scale", "index3d"})
    CHECK(std::find(names.begin(), names.end(), k) != names.end());
  Kernel k = p.kernel("vector_add");
  CHECK(k.name() == "vector_add");
  CHECK(k.device() == f.dev);
  CHECK(k.arg_count() == 4);
  CHECK(k.max_group_size() >= 1);
  CHECK(k.max_group_size() <= f.dev.properties().max_group_size);
  CHECK(k.preferred_group_multiple() >= 1);
  CHECK(k.suggested_group_size() >= 1);
  CHECK(k.suggested_group_size() <= k.max_group_size());
  CHECK(p.device() == f.dev);
}

TEST_CASE("a kernel says how many groups a compute unit runs at once") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::suite_kernels);
  Kernel k = f.program().kernel("vector_add");
  const std::size_t largest = k.max_group_size();
  const std::size_t small = std::min<std::size_t>(32, largest);
  const std::size_t at_small = k.resident_groups_per_unit(small), at_largest = k.resident_groups_per_unit(largest);
  INFO(small << " work-items: " << at_small << " groups; " << largest << ": " << at_largest);
  CHECK(at_largest >= 1);
  CHECK(at_small >= at_largest);  // smaller groups never fit fewer times
  if (f.dev.properties().type == DeviceType::gpu) CHECK(at_small * small >= largest);  // a GPU unit holds a full group
  // Local memory takes room: never more groups with it than without.
  const std::size_t local = f.dev.properties().max_local_memory / 2;
  CHECK(k.resident_groups_per_unit(small, local) >= 1);
  CHECK(k.resident_groups_per_unit(small, local) <= at_small);
  GPURT_REQUIRE_ERROR(k.resident_groups_per_unit(0), ErrorCategory::invalid_argument, "group size 0");
  GPURT_REQUIRE_ERROR(k.resident_groups_per_unit(largest + 1), ErrorCategory::invalid_argument, "max_group_size");
  GPURT_REQUIRE_ERROR(k.resident_groups_per_unit(small, f.dev.properties().max_local_memory + 1),
                      ErrorCategory::invalid_argument, "local memory");
  CHECK(k.resident_groups_per_unit(small) == at_small);  // still usable, and the same answer
}

TEST_CASE("an unknown kernel name lists the kernels the program has") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::suite_kernels);
  Program p = f.program();
  GPURT_REQUIRE_ERROR(p.kernel("vector_ad"), ErrorCategory::invalid_argument, "vector_add");
  CHECK(p.kernel("scale").name() == "scale");
}

TEST_CASE("a build failure carries the compiler log and options") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::suite_kernels);
  const std::string bad_cl = "__kernel void broken(__global float* x) { x[0] = undefined_name; }\n";
  const std::string bad_cu = "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_name; }\n";
  BuildOptions opts;
  opts.defines.push_back({"GPURT_TEST_DEFINE", "1"});
  bool threw = false;
  try {
    if (f.dev.backend() == "cuda") f.dev.build({SourceLanguage::cuda_cpp, bad_cu, "broken.cu"}, opts);
    else f.dev.build({SourceLanguage::opencl_c, bad_cl, "broken.cl"}, opts);
  } catch (const Error& e) {
    threw = true;
    INFO(e.what());
    CHECK(e.category() == ErrorCategory::build_failed);
    CHECK(e.build_log().find("undefined_name") != std::string::npos);
    CHECK(e.build_options().find("-DGPURT_TEST_DEFINE=1") != std::string::npos);
    CHECK(std::string(e.what()).find("broken") != std::string::npos);
  }
  CHECK(threw);
  CHECK(f.program().kernel("empty_kernel").name() == "empty_kernel");
}

TEST_CASE("defines and flags reach the compiler") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::suite_kernels);
  const std::string cl = "__kernel void k(__global int* o) { o[0] = VALUE * 2; }";
  const std::string cu = "extern \"C\" __global__ void k(int* o) { o[0] = VALUE * 2; }";
  BuildOptions opts;
  opts.defines.push_back({"VALUE", "21"});
  Program q = f.dev.backend() == "cuda" ? f.dev.build({SourceLanguage::cuda_cpp, cu, "d.cu"}, opts)
                                        : f.dev.build({SourceLanguage::opencl_c, cl, "d.cl"}, opts);
  auto out = f.dev.alloc<int>(1);
  f.q.launch(q.kernel("k"), LaunchConfig(Dim3(1), Dim3(1)), out);
  CHECK(f.q.read(out)[0] == 42);
}

TEST_CASE("a language the backend does not take is unsupported") {
  test::Fixture f;
  const SourceLanguage foreign =
      f.dev.backend() == "cuda" ? SourceLanguage::opencl_c : SourceLanguage::cuda_cpp;
  GPURT_REQUIRE_ERROR(f.dev.build({foreign, "int x;", "foreign"}), ErrorCategory::unsupported, "cannot build");
  GPURT_REQUIRE_ERROR(f.dev.build({f.dev.properties().languages[0], "", "empty"}),
                      ErrorCategory::invalid_argument, "is empty");
}

TEST_CASE("PTX input builds on CUDA devices") {
  test::Fixture f;
  if (f.dev.backend() != "cuda") GPURT_SKIP("PTX is a CUDA input");
  const std::string ptx = R"(
.version 7.0
.target sm_52
.address_size 64
.visible .entry write42(.param .u64 out) {
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, 42;
  st.global.u32 [%rd2], %r1;
  ret;
}
)";
  Program p = f.dev.build({SourceLanguage::ptx, ptx, "write42.ptx"});
  auto out = f.dev.alloc<std::uint32_t>(1);
  f.q.launch(p.kernel("write42"), LaunchConfig(Dim3(1), Dim3(1)), out);
  CHECK(f.q.read(out)[0] == 42u);
  GPURT_REQUIRE_ERROR(f.dev.build({SourceLanguage::ptx, ".version 7.0\n garbage", "bad.ptx"}),
                      ErrorCategory::build_failed, "bad");
}
