// The CLBlast adapter: lib::matmul (fp32, fp64) on an OpenCL device through CLBlastSgemm /
// CLBlastDgemm, on gpurt's buffers (their cl_mem and the view's offset in elements) and enqueued on
// the queue's own cl_command_queue, so the product runs in the queue's order like any gpurt command.
// CLBlast is found at run time (libclblast.so.1, then libclblast.so; never linked) and declared here
// from clblast_c.h (CLBlast 1.x), so nothing of CLBlast is needed to build: its handles are pointers
// (cl_mem, cl_command_queue, cl_event) and its enums C enums (int). It has no TF32 or bf16 GEMM.
// Calls into CLBlast are serialised process-wide: CLBlast is not reliably thread-safe (its own
// tracker, CNugteren/CLBlast#486, reports unexpected errors from parallel CLBlastSgemm; here four
// threads calling it at once on PoCL crashed one run in twelve, CLBlast printing "CLBlast
// (unexpected): std::bad_alloc"). The lock covers only the enqueue (and CLBlast's kernel build on
// first use): the products themselves still run concurrently on the device.
#include "vendor.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

namespace gpurt::lib::vendor::clblast {

namespace {

// clblast_c.h: CLBlastStatusCode CLBlastSgemm(CLBlastLayout, CLBlastTranspose a, CLBlastTranspose b,
// size_t m, n, k, float alpha, cl_mem a, size_t a_offset, a_ld, cl_mem b, b_offset, b_ld, float beta,
// cl_mem c, c_offset, c_ld, cl_command_queue* queue, cl_event* event); Dgemm the same in double.
template <class T>
using GemmFn = int (*)(int layout, int a_transpose, int b_transpose, std::size_t m, std::size_t n, std::size_t k,
                       T alpha, void* a, std::size_t a_offset, std::size_t a_ld, void* b, std::size_t b_offset,
                       std::size_t b_ld, T beta, void* c, std::size_t c_offset, std::size_t c_ld, void** queue,
                       void** event);
constexpr int layout_row_major = 101;  // CLBlastLayoutRowMajor
constexpr int transpose_no = 111;      // CLBlastTransposeNo

struct Library {
  VendorLibraryInfo info;
  GemmFn<float> sgemm = nullptr;
  GemmFn<double> dgemm = nullptr;
};

// "1.5.3" from ".../libclblast.so.1.5.3" (CLBlast reports no version through its API; the file
// name carries it), else empty.
std::string version_from_file(const std::string& path) {
  const std::size_t so = path.rfind(".so.");
  return so == std::string::npos ? std::string() : path.substr(so + 4);
}

Library load() {
  Library lib;
  lib.info.name = "CLBlast";
  const Opened opened = open_first({"libclblast.so.1", "libclblast.so"});
  if (!opened.handle) {
    lib.info.reason = "CLBlast was not found: tried " + opened.tried +
                      "; install CLBlast 1.x (e.g. the libclblast1 package) for the vendor path";
    return lib;
  }
  void* sgemm = ::dlsym(opened.handle, "CLBlastSgemm");
  lib.sgemm = reinterpret_cast<GemmFn<float>>(sgemm);
  lib.dgemm = reinterpret_cast<GemmFn<double>>(::dlsym(opened.handle, "CLBlastDgemm"));
  std::string path = file_of(sgemm ? sgemm : ::dlsym(opened.handle, "CLBlastDgemm"));
  if (path.empty()) path = opened.name;
  if (!lib.sgemm || !lib.dgemm) {
    lib.info.reason = path + " (" + opened.name +
                      ") lacks CLBlastSgemm or CLBlastDgemm (not CLBlast 1.x's C API); install CLBlast 1.x";
    lib.sgemm = nullptr;
    lib.dgemm = nullptr;
    return lib;
  }
  lib.info.path = path;
  lib.info.version = version_from_file(path);
  lib.info.available = true;
  return lib;
}

const Library& library() {
  static const Library lib = load();  // once per process; thread-safe
  return lib;
}

// CLBlast's status codes (clblast_c.h, CLBlastStatusCode): its name and what it means for gpurt.
struct StatusInfo {
  const char* name;
  ErrorCategory category;
};
StatusInfo status_info(int status) {
  switch (status) {
    case -3: return {"CLBlastOpenCLCompilerNotAvailable", ErrorCategory::unsupported};
    case -4: return {"CLBlastTempBufferAllocFailure", ErrorCategory::out_of_device_memory};
    case -5: return {"CLBlastOpenCLOutOfResources", ErrorCategory::out_of_device_memory};
    case -6: return {"CLBlastOpenCLOutOfHostMemory", ErrorCategory::out_of_host_memory};
    case -11: return {"CLBlastOpenCLBuildProgramFailure", ErrorCategory::build_failed};
    case -30: return {"CLBlastInvalidValue", ErrorCategory::internal};
    case -36: return {"CLBlastInvalidCommandQueue", ErrorCategory::internal};
    case -38: return {"CLBlastInvalidMemObject", ErrorCategory::internal};
    case -42: return {"CLBlastInvalidBinary", ErrorCategory::internal};
    case -43: return {"CLBlastInvalidBuildOptions", ErrorCategory::internal};
    case -44: return {"CLBlastInvalidProgram", ErrorCategory::internal};
    case -45: return {"CLBlastInvalidProgramExecutable", ErrorCategory::internal};
    case -46: return {"CLBlastInvalidKernelName", ErrorCategory::internal};
    case -47: return {"CLBlastInvalidKernelDefinition", ErrorCategory::internal};
    case -48: return {"CLBlastInvalidKernel", ErrorCategory::internal};
    case -49: return {"CLBlastInvalidArgIndex", ErrorCategory::internal};
    case -50: return {"CLBlastInvalidArgValue", ErrorCategory::internal};
    case -51: return {"CLBlastInvalidArgSize", ErrorCategory::internal};
    case -52: return {"CLBlastInvalidKernelArgs", ErrorCategory::internal};
    case -53: return {"CLBlastInvalidLocalNumDimensions", ErrorCategory::unsupported};
    case -54: return {"CLBlastInvalidLocalThreadsTotal", ErrorCategory::unsupported};
    case -55: return {"CLBlastInvalidLocalThreadsDim", ErrorCategory::unsupported};
    case -56: return {"CLBlastInvalidGlobalOffset", ErrorCategory::internal};
    case -57: return {"CLBlastInvalidEventWaitList", ErrorCategory::internal};
    case -58: return {"CLBlastInvalidEvent", ErrorCategory::internal};
    case -59: return {"CLBlastInvalidOperation", ErrorCategory::internal};
    case -61: return {"CLBlastInvalidBufferSize", ErrorCategory::internal};
    case -63: return {"CLBlastInvalidGlobalWorkSize", ErrorCategory::internal};
    case -1024: return {"CLBlastNotImplemented", ErrorCategory::unsupported};
    case -1022: return {"CLBlastInvalidMatrixA", ErrorCategory::internal};
    case -1021: return {"CLBlastInvalidMatrixB", ErrorCategory::internal};
    case -1020: return {"CLBlastInvalidMatrixC", ErrorCategory::internal};
    case -1017: return {"CLBlastInvalidDimension", ErrorCategory::internal};
    case -1016: return {"CLBlastInvalidLeadDimA", ErrorCategory::internal};
    case -1015: return {"CLBlastInvalidLeadDimB", ErrorCategory::internal};
    case -1014: return {"CLBlastInvalidLeadDimC", ErrorCategory::internal};
    case -1011: return {"CLBlastInsufficientMemoryA", ErrorCategory::internal};
    case -1010: return {"CLBlastInsufficientMemoryB", ErrorCategory::internal};
    case -1009: return {"CLBlastInsufficientMemoryC", ErrorCategory::internal};
    case -2050: return {"CLBlastInsufficientMemoryTemp", ErrorCategory::internal};
    case -2046: return {"CLBlastInvalidLocalMemUsage", ErrorCategory::unsupported};
    case -2045: return {"CLBlastNoHalfPrecision", ErrorCategory::unsupported};
    case -2044: return {"CLBlastNoDoublePrecision", ErrorCategory::unsupported};
    case -2041: return {"CLBlastDatabaseError", ErrorCategory::unsupported};
    case -2040: return {"CLBlastUnknownError", ErrorCategory::internal};
    case -2039: return {"CLBlastUnexpectedError", ErrorCategory::internal};
    default: return {"unknown CLBlast status", ErrorCategory::internal};
  }
}

// The view's offset in elements of T: a gpurt view starts at a whole element of its type.
template <class T>
std::size_t elements(const NativeHandle& h) {
  return h.offset_bytes / sizeof(T);
}

template <class T>
void run(Queue& queue, GemmFn<T> fn, const char* call, const GemmArgs& g) {
  static std::mutex serial;  // see the top of this file
  void* q = reinterpret_cast<void*>(static_cast<std::uintptr_t>(native_handle(queue).handle));
  auto mem = [](const NativeHandle& h) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(h.handle)); };
  std::unique_lock<std::mutex> lock(serial);
  const int status = fn(layout_row_major, transpose_no, transpose_no, g.m, g.n, g.k, T(1), mem(g.a), elements<T>(g.a),
                        g.k, mem(g.b), elements<T>(g.b), g.n, T(0), mem(g.c), elements<T>(g.c), g.n, &q, nullptr);
  lock.unlock();
  if (status == 0) return;
  const StatusInfo s = status_info(status);
  const Device device = queue.device();
  fail(device, s.category,
       std::string(call) + " failed with " + s.name + " (" + std::to_string(status) + ") in " +
           std::string(span_name(g.precision, "CLBlast")) + " of " + std::to_string(g.m) + " x " + std::to_string(g.n) + " x " +
           std::to_string(g.k) + " on " + device.description() +
           "; nothing of the product is to be trusted - run it with the portable kernels "
           "(Options::vendor = VendorLibraries::off or GPURT_VENDOR_LIBRARIES=off)" +
           (s.category == ErrorCategory::internal ? " and report this" : ""),
       call, status, s.name);
}

VendorLibraryInfo info() { return library().info; }

// CLBlast covers fp32 everywhere and fp64 where the device has it; never TF32 or bf16.
bool covers(const Device& device, Precision precision, std::string& why) {
  const Library& lib = library();
  if (!lib.info.available) {
    why = lib.info.reason;
    return false;
  }
  switch (precision) {
    case Precision::fp32: return true;
    case Precision::fp64:
      if (device.properties().fp64) return true;
      why = "CLBlast runs fp64 only on devices with fp64, which " + device.description() + " lacks";
      return false;
    case Precision::tf32:
    case Precision::bf16: break;
  }
  why = std::string("CLBlast has no ") + to_string(precision) + " GEMM (it offers fp16, fp32 and fp64)";
  return false;
}

// fp32 or fp64 (vendor.hpp's gemm).
void gemm(Queue& queue, const GemmArgs& args) {
  const Library& lib = library();
  std::string why;
  if (!covers(queue.device(), args.precision, why))
    fail(queue.device(), ErrorCategory::unsupported, why, "gpurt::lib::matmul", 0, {});
  if (args.precision == Precision::fp64) run<double>(queue, lib.dgemm, "CLBlastDgemm", args);
  else run<float>(queue, lib.sgemm, "CLBlastSgemm", args);
}

}  // namespace
}  // namespace gpurt::lib::vendor::clblast

namespace gpurt::lib::vendor {
const Adapter clblast_adapter = {"CLBlast", "cl_context", clblast::info, clblast::covers, clblast::gemm};
}  // namespace gpurt::lib::vendor
