// The CUDA mapping of the portable dialect, compiled with NVRTC alone (no GPU, no driver): the
// contract cases' kernels build on the CUDA backend exactly as they do on PoCL, where they also run.
#include <nvrtc.h>

#include <string>
#include <vector>

#include "api_kernels.hpp"
#include "sub_group_kernels.hpp"
#include "cu_prelude.hpp"
#include "harness.hpp"

namespace {

// Compiles `source` after the portable prelude, as CuDevice::build does, to PTX for the oldest
// architecture gpurt supports. Returns the log; `ok` says whether NVRTC succeeded.
std::string compile_portable(const std::string& source, bool& ok, const char* arch = "compute_75",
                             const std::vector<std::string>& flags = {}) {
  const std::string text =
      std::string(gpurt::cuda::portable_prelude) + "#line 1 \"test.gpurt\"\n" + source;
  nvrtcProgram prog = nullptr;
  REQUIRE(nvrtcCreateProgram(&prog, text.c_str(), "test.gpurt", 0, nullptr, nullptr) == NVRTC_SUCCESS);
  const std::string arch_flag = std::string("--gpu-architecture=") + arch;
  std::vector<const char*> opts = {arch_flag.c_str(), "--std=c++17"};
  for (const std::string& f : flags) opts.push_back(f.c_str());
  ok = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data()) == NVRTC_SUCCESS;
  std::size_t size = 0;
  nvrtcGetProgramLogSize(prog, &size);
  std::string log(size, '\0');
  if (size > 0) nvrtcGetProgramLog(prog, &log[0]);
  nvrtcDestroyProgram(&prog);
  return log;
}

}  // namespace

TEST_CASE("kernel-language: GPURT_LOCAL_PTR helpers and size_t compile under NVRTC") {
  // kernel-language.md: "A helper takes a pointer to local memory through `GPURT_LOCAL_PTR`" and
  // "on CUDA it is empty, since CUDA pointers are generic": the contract cases' kernels (static
  // and dynamic local memory passed to such helpers, size_t throughout) build with NVRTC.
  bool ok = false;
  const std::string log = compile_portable(gpurt::test::api_source, ok);
  INFO(log);
  CHECK(ok);
}

TEST_CASE("kernel-language: GPURT_LOCAL cannot spell a helper's local pointer on CUDA") {
  // kernel-language.md: "`GPURT_LOCAL` cannot be used for this: on CUDA it is `__shared__`, a
  // storage class for variables, which is not allowed on a parameter." The reason the dialect has
  // GPURT_LOCAL_PTR, checked so that the documentation stays true.
  bool ok = true;
  const std::string log =
      compile_portable("GPURT_INLINE void f(GPURT_LOCAL float* t) { t[0] = 1.0f; }\n", ok);
  INFO(log);
  CHECK_FALSE(ok);
  CHECK(log.find("__shared__") != std::string::npos);
}

TEST_CASE("kernel-language.md: every sub-group word and group collective of every type compiles under NVRTC") {
  // kernel-language.md, "Sub-groups": the CUDA column (warps through __shfl_*_sync, __ballot_sync,
  // __reduce_*_sync from sm_80) builds for the oldest architecture, for sm_80 and sm_90, and with
  // -DGPURT_SUB_GROUPS_SINGLE_ITEM; each type as test_sub_groups.cpp builds it.
  const char* types[][2] = {{"int32_t", "i32"}, {"uint32_t", "u32"}, {"float", "f32"},
                            {"int64_t", "i64"}, {"uint64_t", "u64"}, {"double", "f64"}};
  for (const char* arch : {"compute_75", "compute_80", "compute_90"})
    for (bool single : {false, true})
      for (const auto& t : types) {
        INFO(arch << " " << t[0] << (single ? " single-item" : ""));
        // T and S as Device::build's defines give them: lines after the prelude (a -DT would rename
        // NVRTC's own template parameters).
        const std::string source = std::string("#define T ") + t[0] + "\n#define S " + t[1] + "\n" +
                                   gpurt::test::sub_group_source;
        std::vector<std::string> flags;
        if (single) flags.push_back("-DGPURT_SUB_GROUPS_SINGLE_ITEM");
        bool ok = false;
        const std::string log = compile_portable(source, ok, arch, flags);
        INFO(log);
        CHECK(ok);
      }
}

TEST_CASE("kernel-language.md: the vector types' constructors and operators compile under NVRTC") {
  // kernel-language.md, "Vector types": "on CUDA the prelude supplies the operators" - each
  // operator with a vector or a scalar on either side, the compound assignments and unary minus.
  const char* src = R"(
GPURT_KERNEL void v(GPURT_GLOBAL float4* a, GPURT_GLOBAL int2* b, GPURT_GLOBAL uint4* c, float2 s) {
  const size_t i = gpurt_global_id(0);
  float4 x = gpurt_make_float4(1, 2, 3, 4) * a[i] + 1.0f - 2.0f * a[i] / 3.0f;
  x += a[i]; x -= 1.0f; x *= x; x /= 2.0f; a[i] = -x;
  int2 y = gpurt_make_int2(x.x, x.y) / 2 - b[i] * 3; y += 1; b[i] = -y;
  uint4 z = gpurt_make_uint4(1, 2, 3, 4) - c[i] / 2u; z *= 3u; c[i] = z;
  float2 w = gpurt_make_float2(s.x, s.y) * s; int4 q = gpurt_make_int4(1, 2, 3, 4) + 1; uint2 r = gpurt_make_uint2(1, 2) * 2u;
  a[i].x += w.x + (float)q.w + (float)r.y;
})";
  bool ok = false;
  const std::string log = compile_portable(src, ok);
  INFO(log);
  CHECK(ok);
}
