// Loads the OpenCL ICD loader for the raw baseline (see opencl_api.hpp).
#include "raw/opencl_api.hpp"

#include <string>

#include "raw/common.hpp"

namespace gpurt::bench::raw {

namespace {

OpenclApi load() {
  OpenclApi api;
  const std::string what = "the OpenCL ICD loader (libOpenCL.so.1)";
  void* lib = open_library({"libOpenCL.so.1"}, "opencl", what);
#define GPURT_RAW_RESOLVE(name) api.name = reinterpret_cast<decltype(api.name)>(symbol(lib, #name, "opencl", what));
  GPURT_RAW_OPENCL_FUNCTIONS(GPURT_RAW_RESOLVE)
#undef GPURT_RAW_RESOLVE
  return api;
}

}  // namespace

const OpenclApi& OpenclApi::get() {
  static const OpenclApi api = load();  // a throw leaves it unset: the next call tries again
  return api;
}

}  // namespace gpurt::bench::raw
