// The vendor path's dispatch and what its adapters share. Each adapter (cublas_gemm.cpp,
// clblast_gemm.cpp, beside this file) works in one kind of native context; a device gets the
// adapter of the native context it declares (gpurt::native_handle(device, NativeKind::context)),
// so the choice follows the device, not its backend's name, and a device that declares no native
// context, or one no adapter speaks, gets the portable kernels with the reason.
#include "vendor.hpp"

#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>

#include <cstdint>

#include "gpurt/trace.hpp"

namespace gpurt::lib::vendor {

namespace {

// The adapters this gpurt::lib knows, by the native context each works in; `adapter` is null for
// one this build lacks, with `absent` saying why.
struct Known {
  const char* library;
  const char* context_type;
  const Adapter* adapter;
  const char* absent;
};
const Known known[] = {
#if GPURT_LIB_HAVE_CUBLAS
    {cublas_adapter.library, cublas_adapter.context_type, &cublas_adapter, nullptr},
#else
    {"cuBLAS", "CUcontext", nullptr,
     "this gpurt::lib was built without the CUDA toolkit's cuBLAS headers, so it has no cuBLAS adapter; rebuild "
     "gpurt where the CUDA toolkit (with cuBLAS) is installed"},
#endif
    {clblast_adapter.library, clblast_adapter.context_type, &clblast_adapter, nullptr},
};

// The device's adapter, or null with `why` there is none; `library` names the vendor library of
// the device's kind even when this build lacks its adapter (empty when there is none).
const Adapter* adapter_of(const Device& device, std::string& why, std::string* library = nullptr) {
  std::string context;
  try {
    context = native_handle(device, NativeKind::context).type_name;
  } catch (const Error& e) {
    why = device.description() + " declares no native context (" + e.message() +
          "), and every vendor BLAS adapter of gpurt::lib works in one (cuBLAS in a CUcontext, CLBlast in a "
          "cl_context)";
    return nullptr;
  }
  for (const Known& k : known)
    if (context == k.context_type) {
      if (library) *library = k.library;
      if (!k.adapter) why = k.absent;
      return k.adapter;
    }
  why = device.description() + " works in a native context of type '" + context +
        "', which no vendor BLAS adapter of gpurt::lib speaks (cuBLAS works in a CUcontext, CLBlast in a cl_context)";
  return nullptr;
}

}  // namespace

VendorLibraryInfo info(const Device& device) {
  std::string why, library;
  if (const Adapter* a = adapter_of(device, why, &library)) return a->info();
  VendorLibraryInfo out;
  out.name = library;
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
