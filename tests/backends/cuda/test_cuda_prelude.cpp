// The CUDA mapping of the portable dialect, compiled with NVRTC alone (no GPU, no driver): the
// contract cases' kernels build on the CUDA backend exactly as they do on PoCL, where they also run.
#include <nvrtc.h>

#include <string>
#include <vector>

#include "api_kernels.hpp"
#include "cu_prelude.hpp"
#include "harness.hpp"

namespace {

// Compiles `source` after the portable prelude, as CuDevice::build does, to PTX for the oldest
// architecture gpurt supports. Returns the log; `ok` says whether NVRTC succeeded.
std::string compile_portable(const std::string& source, bool& ok) {
  const std::string text =
      std::string(gpurt::cuda::portable_prelude) + "#line 1 \"test.gpurt\"\n" + source;
  nvrtcProgram prog = nullptr;
  REQUIRE(nvrtcCreateProgram(&prog, text.c_str(), "test.gpurt", 0, nullptr, nullptr) == NVRTC_SUCCESS);
  const std::vector<const char*> opts = {"--gpu-architecture=compute_75", "--std=c++17"};
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
