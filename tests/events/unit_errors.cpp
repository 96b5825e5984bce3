// gpurt::Error: categories, details and the text a person reads.
#include <set>

#include "api/format.hpp"
#include "harness.hpp"

using gpurt::Error;
using gpurt::ErrorCategory;

TEST_CASE("error carries category and details and prints them") {
  gpurt::ErrorDetails d;
  d.backend = "cuda";
  d.native_code = 2;
  d.native_name = "CUDA_ERROR_OUT_OF_MEMORY";
  d.call = "cuMemAlloc";
  d.device = "cuda:0 (NVIDIA H200)";
  const Error e(ErrorCategory::out_of_device_memory, "allocating 1 TiB", d);
  CHECK(e.category() == ErrorCategory::out_of_device_memory);
  CHECK(e.message() == "allocating 1 TiB");
  CHECK(e.native_code() == 2);
  const std::string what = e.what();
  CHECK(what.find("out_of_device_memory") != std::string::npos);
  CHECK(what.find("CUDA_ERROR_OUT_OF_MEMORY (2)") != std::string::npos);
  CHECK(what.find("call: cuMemAlloc") != std::string::npos);
  CHECK(what.find("cuda:0 (NVIDIA H200)") != std::string::npos);
}

TEST_CASE("build errors print the compiler log and options") {
  gpurt::ErrorDetails d;
  d.build_log = "line 3: expected ';'";
  d.build_options = "-cl-std=CL1.2";
  const Error e(ErrorCategory::build_failed, "building 'k.cl' failed", d);
  const std::string what = e.what();
  CHECK(what.find("--- build log ---\nline 3: expected ';'") != std::string::npos);
  CHECK(what.find("build options: -cl-std=CL1.2") != std::string::npos);
}

TEST_CASE("every category has a distinct name") {
  const ErrorCategory all[] = {ErrorCategory::invalid_argument,    ErrorCategory::out_of_device_memory,
                               ErrorCategory::out_of_host_memory,  ErrorCategory::build_failed,
                               ErrorCategory::backend_unavailable, ErrorCategory::device_lost,
                               ErrorCategory::unsupported,         ErrorCategory::internal,
                               ErrorCategory::timeout};
  std::set<std::string> names;
  for (ErrorCategory c : all) names.insert(gpurt::to_string(c));
  CHECK(names.size() == 9);
  CHECK(names.count("timeout") == 1);
  CHECK(names.count("unknown") == 0);
}

TEST_CASE("byte counts are printed with a readable unit") {
  CHECK(gpurt::detail::format_bytes(17) == "17 bytes");
  CHECK(gpurt::detail::format_bytes(268435456) == "268435456 bytes (256 MiB)");
  CHECK(gpurt::detail::format_bytes(1536) == "1536 bytes (1.5 KiB)");
}
