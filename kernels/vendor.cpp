// The vendor path's dispatch and what its adapters share. The adapters are per backend (cuBLAS for
// cuda devices, CLBlast for opencl devices: backends/<name>/lib/); this file is the only one of the
// library that picks by the device's backend name.
#include "vendor.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include "gpurt/trace.hpp"

namespace gpurt::lib::vendor {

namespace {

// The device's adapter, or null with `why` there is none.
const Adapter* adapter_of(const Device& device, std::string& why) {
  const std::string& backend = device.backend();
  if (backend == "cuda") {
#if GPURT_LIB_HAVE_CUBLAS
    return &cublas_adapter;
#else
    why = "this gpurt::lib was built without the CUDA toolkit's cuBLAS headers, so it has no cuBLAS adapter; "
          "rebuild gpurt where the CUDA toolkit (with cuBLAS) is installed";
    return nullptr;
#endif
  }
  if (backend == "opencl") return &clblast_adapter;
  why = "gpurt::lib has no vendor BLAS adapter for the " + backend +
        " backend (it calls cuBLAS on cuda devices and CLBlast on opencl devices)";
  return nullptr;
}

}  // namespace

VendorLibraryInfo info(const Device& device) {
  std::string why;
  if (const Adapter* a = adapter_of(device, why)) return a->info();
  VendorLibraryInfo out;
  if (device.backend() == "cuda") out.name = "cuBLAS";
  out.reason = why;
  return out;
}

bool covers(const Device& device, Precision precision, std::string& why) {
  const Adapter* a = adapter_of(device, why);
  return a && a->covers(device, precision, why);
}

void gemm(Queue& queue, const GemmArgs& args) {
  const Device device = queue.device();
  std::string why;
  const Adapter* a = adapter_of(device, why);
  if (!a) fail(device, ErrorCategory::unsupported, why, "gpurt::lib::matmul", 0, {});
  TraceSpan span(queue, span_name(args.precision, a->library));
  a->gemm(queue, args);
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

std::string_view span_name(Precision precision, std::string_view library) {
  // Made once: a vendor call builds no string for its span (the span copies it only while tracing).
  static const std::string names[2][4] = {
      {"lib::matmul (cuBLAS)", "lib::matmul_tf32 (cuBLAS)", "lib::matmul_bf16 (cuBLAS)", "lib::matmul (cuBLAS)"},
      {"lib::matmul (CLBlast)", "lib::matmul_tf32 (CLBlast)", "lib::matmul_bf16 (CLBlast)", "lib::matmul (CLBlast)"}};
  const int row = library == "cuBLAS" ? 0 : library == "CLBlast" ? 1 : -1;
  const int col = precision == Precision::fp32 ? 0 : precision == Precision::tf32 ? 1 : precision == Precision::bf16 ? 2 : 3;
  if (row >= 0) return names[row][col];
  static thread_local std::string other;  // an adapter not in the table
  other = std::string(col == 1 ? "lib::matmul_tf32" : col == 2 ? "lib::matmul_bf16" : "lib::matmul") + " (" +
          std::string(library) + ")";
  return other;
}

}  // namespace gpurt::lib::vendor
