// The vendor path's dispatch and what its adapters share. The adapters are per backend (cuBLAS for
// cuda devices, CLBlast for opencl devices: backends/<name>/lib/); this file is the only one of the
// library that picks by the device's backend name.
#include "vendor.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include "clblast_gemm.hpp"
#if GPURT_LIB_HAVE_CUBLAS
#include "cublas_gemm.hpp"
#endif
#include "gpurt/trace.hpp"

namespace gpurt::lib::vendor {

namespace {

enum class Adapter { none, cublas, clblast };

Adapter adapter_of(const Device& device) {
  const std::string& backend = device.backend();
  if (backend == "cuda") return Adapter::cublas;
  if (backend == "opencl") return Adapter::clblast;
  return Adapter::none;
}

std::string no_adapter(const Device& device) {
  return "gpurt::lib has no vendor BLAS adapter for the " + device.backend() +
         " backend (it calls cuBLAS on cuda devices and CLBlast on opencl devices)";
}

#if !GPURT_LIB_HAVE_CUBLAS
const char* no_cublas =
    "this gpurt::lib was built without the CUDA toolkit's cuBLAS headers, so it has no cuBLAS adapter; "
    "rebuild gpurt where the CUDA toolkit (with cuBLAS) is installed";
#endif

}  // namespace

VendorLibraryInfo info(const Device& device) {
  switch (adapter_of(device)) {
    case Adapter::cublas:
#if GPURT_LIB_HAVE_CUBLAS
      return cublas::info();
#else
    {
      VendorLibraryInfo out;
      out.name = "cuBLAS";
      out.reason = no_cublas;
      return out;
    }
#endif
    case Adapter::clblast: return clblast::info();
    case Adapter::none: break;
  }
  VendorLibraryInfo out;
  out.reason = no_adapter(device);
  return out;
}

bool covers(const Device& device, Precision precision, std::string& why) {
  switch (adapter_of(device)) {
    case Adapter::cublas:
#if GPURT_LIB_HAVE_CUBLAS
      return cublas::covers(device, precision, why);
#else
      why = no_cublas;
      return false;
#endif
    case Adapter::clblast: return clblast::covers(device, precision, why);
    case Adapter::none: break;
  }
  why = no_adapter(device);
  return false;
}

void gemm(Queue& queue, const GemmArgs& args) {
  const Device device = queue.device();
  switch (adapter_of(device)) {
    case Adapter::cublas: {
#if GPURT_LIB_HAVE_CUBLAS
      TraceSpan span(queue, span_name(args.precision, "cuBLAS"));
      cublas::gemm(queue, args);
      return;
#else
      fail(device, ErrorCategory::unsupported, no_cublas, "gpurt::lib::matmul", 0, {});
#endif
    }
    case Adapter::clblast: {
      TraceSpan span(queue, span_name(args.precision, "CLBlast"));
      clblast::gemm(queue, args);
      return;
    }
    case Adapter::none: break;
  }
  fail(device, ErrorCategory::unsupported, no_adapter(device), "gpurt::lib::matmul", 0, {});
}

Opened open_first(const std::vector<std::string>& names) {
  Opened out;
  for (const std::string& name : names) {
    if (void* h = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      out.handle = h;
      out.name = name;
      return out;
    }
    const char* text = ::dlerror();
    out.tried += (out.tried.empty() ? "" : "; ") + name + " (" + (text ? text : "not found") + ")";
  }
  return out;
}

std::string file_of(const void* symbol) {
  Dl_info where{};
  if (!symbol || ::dladdr(symbol, &where) == 0 || !where.dli_fname) return {};
  char real[PATH_MAX];
  if (::realpath(where.dli_fname, real)) return real;
  return where.dli_fname;
}

void fail(const Device& device, ErrorCategory category, const std::string& message, const char* call,
          std::int64_t status, const std::string& status_name) {
  throw Error(category, message, ErrorDetails{device.backend(), status, status_name, call, device.description(), {}, {}});
}

std::string span_name(Precision precision, const std::string& library) {
  const char* call = precision == Precision::tf32   ? "lib::matmul_tf32"
                     : precision == Precision::bf16 ? "lib::matmul_bf16"
                                                    : "lib::matmul";
  return std::string(call) + " (" + library + ")";
}

}  // namespace gpurt::lib::vendor
