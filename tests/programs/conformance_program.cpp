// Programs and kernels: builds, build failures with logs, kernel lookup, languages.
#include <algorithm>
#include <cstdint>

#include "fixture.hpp"

using namespace gpurt;

namespace {
// The same small programs in each native language a device may build: for the cases that test
// that a native language's builds get the same treatment as the portable dialect's.
struct NativeSources {
  SourceLanguage language;
  const char* file;        // ProgramSource::name
  const char* broken;      // kernel `broken` using an undefined name
  const char* times_two;   // kernel `k` writing VALUE * 2 to its one int
};
const NativeSources native_sources[] = {
    {SourceLanguage::opencl_c, "native.cl", "__kernel void broken(__global float* x) { x[0] = undefined_name; }\n",
     "__kernel void k(__global int* o) { o[0] = VALUE * 2; }\n"},
    {SourceLanguage::cuda_cpp, "native.cu", "extern \"C\" __global__ void broken(float* x) { x[0] = undefined_name; }\n",
     "extern \"C\" __global__ void k(int* o) { o[0] = VALUE * 2; }\n"},
};

// Builds `source` with a define, expecting build_failed with the compiler's log, the options and
// the program's name (errors.md: "build error | build_failed | the compiler's log, once, with the
// user's own file name ... and the options used").
void check_build_failure(test::Fixture& f, const ProgramSource& source) {
  INFO(to_string(source.language) << " program " << source.name);
  BuildOptions opts;
  opts.defines.push_back({"GPURT_TEST_DEFINE", "1"});
  bool threw = false;
  try {
    f.dev.build(source, opts);
  } catch (const Error& e) {
    threw = true;
    INFO(e.what());
    CHECK(e.category() == ErrorCategory::build_failed);
    CHECK(e.build_log().find("undefined_name") != std::string::npos);
    CHECK(e.build_options().find("-DGPURT_TEST_DEFINE=1") != std::string::npos);
    CHECK(std::string(e.what()).find(source.name) != std::string::npos);
  }
  CHECK(threw);
}

// Builds `source` (kernel `k(int* o)` writing VALUE * 2) with VALUE=21 and checks it wrote 42.
void check_define_reaches_compiler(test::Fixture& f, const ProgramSource& source) {
  INFO(to_string(source.language) << " program " << source.name);
  BuildOptions opts;
  opts.defines.push_back({"VALUE", "21"});
  Program q = f.dev.build(source, opts);
  auto out = f.dev.alloc<int>(1);
  f.q.launch(q.kernel("k"), LaunchConfig(Dim3(1), Dim3(1)), out);
  CHECK(f.q.read(out)[0] == 42);
}

// Runs `check` on each native language's program that the device builds; false when it builds none.
template <class Check>
bool for_each_native_language(test::Fixture& f, const char* NativeSources::*text, Check check) {
  bool any = false;
  for (const NativeSources& n : native_sources) {
    if (!test::builds(f.dev, n.language)) continue;
    any = true;
    check(f, ProgramSource{n.language, n.*text, n.file});
  }
  return any;
}
}  // namespace

TEST_CASE("a program lists its kernels and finds them by name") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Program p = f.program();
  const auto names = p.kernel_names();
  for (const char* k : {"vector_add", "empty_kernel", "scale", "index3d", "group_shape", "count_items",
                        "reverse_in_group", "scalars", "busy_add"})
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
  GPURT_NEEDS(f.dev, test::Need::portable_dialect);
  Kernel k = f.vector_add();
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
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  Program p = f.program();
  GPURT_REQUIRE_ERROR(p.kernel("vector_ad"), ErrorCategory::invalid_argument, "vector_add");
  GPURT_REQUIRE_ERROR(p.kernel("vector_ad"), ErrorCategory::invalid_argument, "busy_add");
  CHECK(p.kernel("scale").name() == "scale");
}

TEST_CASE("a build failure carries the compiler log and options") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  check_build_failure(f, {SourceLanguage::portable,
                          "GPURT_KERNEL void broken(GPURT_GLOBAL float* x) { x[0] = undefined_name; }\n",
                          "broken.gpurt"});
  CHECK(f.program().kernel("empty_kernel").name() == "empty_kernel");
}

TEST_CASE("native languages: a build failure carries the compiler log and options") {
  test::Fixture f;
  if (!for_each_native_language(f, &NativeSources::broken, check_build_failure))
    GPURT_SKIP(f.dev.description() + " builds neither OpenCL C nor CUDA C++");
  for_each_native_language(f, &NativeSources::times_two, check_define_reaches_compiler);  // still builds
}

TEST_CASE("defines and flags reach the compiler") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, test::Need::portable_kernels);
  check_define_reaches_compiler(f, {SourceLanguage::portable,
                                    "GPURT_KERNEL void k(GPURT_GLOBAL int32_t* o) { o[0] = VALUE * 2; }\n",
                                    "defines.gpurt"});
}

TEST_CASE("native languages: defines reach the compiler") {
  test::Fixture f;
  if (!for_each_native_language(f, &NativeSources::times_two, check_define_reaches_compiler))
    GPURT_SKIP(f.dev.description() + " builds neither OpenCL C nor CUDA C++");
}

TEST_CASE("a language the backend does not take is unsupported") {
  // types.hpp: DeviceProperties::languages is "what Device::build accepts": every other language is
  // refused as unsupported, whatever the source.
  test::Fixture f;
  bool any = false;
  for (SourceLanguage l : {SourceLanguage::portable, SourceLanguage::opencl_c, SourceLanguage::cuda_cpp,
                           SourceLanguage::ptx, SourceLanguage::cubin}) {
    if (test::builds(f.dev, l)) continue;
    any = true;
    INFO(to_string(l));
    GPURT_REQUIRE_ERROR(f.dev.build({l, "int x;", "foreign"}), ErrorCategory::unsupported, "cannot build");
  }
  // A device may declare no language at all (a backend without a compiler): then every build is
  // unsupported, and "builds no program" says so.
  if (!f.dev.properties().languages.empty())
    GPURT_REQUIRE_ERROR(f.dev.build({f.dev.properties().languages[0], "", "empty"}),
                        ErrorCategory::invalid_argument, "is empty");
  else
    GPURT_REQUIRE_ERROR(f.dev.build({SourceLanguage::portable, "x", "p"}), ErrorCategory::unsupported,
                        "builds no program");
  if (!any) GPURT_SKIP(f.dev.description() + " builds every language gpurt has");
}

TEST_CASE("PTX input builds where the device takes PTX") {
  test::Fixture f;
  GPURT_NEEDS(f.dev, SourceLanguage::ptx);
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
