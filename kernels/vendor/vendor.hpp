// The kernel library's vendor path (internal to libgpurt-lib): a vendor BLAS - cuBLAS where the
// device works in a CUcontext, CLBlast where it works in a cl_context - found at run time and called
// on gpurt's buffers and queue through their native handles (gpurt/native.hpp), as an application
// would. The adapters that speak each vendor's API live beside this header, in kernels/vendor/ (the
// only files of the library that may include a vendor header), and are compiled into libgpurt-lib,
// not into the plugins (docs/architecture.md says why); this header and the library's host code see
// gpurt types only. vendor.cpp picks the adapter by what the device declares - the type of its
// native context (gpurt::native_handle(device, NativeKind::context)) - never by its backend's name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "gpurt/buffer.hpp"
#include "gpurt/error.hpp"
#include "gpurt/library.hpp"
#include "gpurt/native.hpp"
#include "gpurt/queue.hpp"

namespace gpurt::lib::vendor {

// What the device's backend offers (loads the vendor library once per process and backend).
VendorLibraryInfo info(const Device& device);

// Whether the vendor library covers a `precision` matmul on `device`; when not, `why` says why
// (library absent: what was searched and the loader's text; or the precision is not offered).
bool covers(const Device& device, Precision precision, std::string& why);

// One row-major product c (m x n) = a (m x k) * b (k x n) in `precision`, enqueued on `queue`
// through the vendor library, inside a gpurt::TraceSpan "lib::matmul (cuBLAS)" (or matmul_tf32,
// matmul_bf16; CLBlast) so that a trace shows it. The buffers are native handles of views
// (offset_bytes included); sizes were checked by the caller, m, n, k > 0, each at most 2^31.
// Throws gpurt::Error naming the vendor call on failure.
struct GemmArgs {
  Precision precision = Precision::fp32;
  NativeHandle a, b, c;
  std::size_t m = 0, n = 0, k = 0;
};
void gemm(Queue& queue, const GemmArgs& args);

// ---- The adapters: one per vendor BLAS, each defined in its own file beside this header (which
// alone includes the vendor's header) as one of these.
struct Adapter {
  const char* library;                 // "cuBLAS", "CLBlast": VendorLibraryInfo::name and the trace span's
  const char* context_type;            // the native context it works in ("CUcontext", "cl_context"), as
                                       // NativeHandle::type_name spells it: it serves the devices declaring one
  VendorLibraryInfo (*info)();         // the library as found on this machine (loaded once per process)
  bool (*covers)(const Device& device, Precision precision, std::string& why);
  void (*gemm)(Queue& queue, const GemmArgs& args);  // vendor::gemm on a queue of the adapter's backend
};
#if GPURT_LIB_HAVE_CUBLAS
extern const Adapter cublas_adapter;   // backends/cuda/lib/cublas_gemm.cpp: devices in a CUcontext
#endif
extern const Adapter clblast_adapter;  // clblast_gemm.cpp: devices in a cl_context

// ---- What the adapters share (vendor.cpp).

// A vendor library opened with dlopen (RTLD_NOW | RTLD_LOCAL; never closed): the first of `names`
// that loads. When none does, `handle` is null and `tried` lists each name with the loader's text
// ("libclblast.so.1 (libclblast.so.1: cannot open shared object file: ...)").
struct Opened {
  void* handle = nullptr;
  std::string name;   // the name that loaded
  std::string tried;  // each name tried and why it failed
};
Opened open_first(const std::vector<std::string>& names);

// The file the loaded `symbol` comes from (dladdr), resolved to its real path; empty if unknown.
std::string file_of(const void* symbol);

// Throws the vendor path's Error on `device`: `call` is the vendor's function ("cublasGemmEx"),
// `status` and `status_name` its result (0 and empty when there is none); `message` says what
// failed and what to do.
[[noreturn]] void fail(const Device& device, ErrorCategory category, const std::string& message, const char* call,
                       std::int64_t status, const std::string& status_name);

// The span name of a vendor matmul: "lib::matmul (cuBLAS)", "lib::matmul_tf32 (cuBLAS)", ...
// (valid until the thread's next call for an adapter other than cuBLAS and CLBlast).
std::string_view span_name(Precision precision, std::string_view library);

// An adapter's state for one queue (a vendor handle bound to its native queue), made on the queue's
// first vendor call and owned by the queue (Queue::keep_until_destroyed): it goes with the queue,
// after its work. Found again through weak references keyed by Queue::id(), which keep no queue
// alive; `make` runs under the registry's lock and may throw (then nothing is kept).
template <class T>
class PerQueue {
 public:
  template <class Make>
  std::shared_ptr<T> get(Queue& queue, Make&& make) {
    const std::uint64_t id = queue.id();
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = registry_.find(id);
    if (it != registry_.end())
      if (std::shared_ptr<T> s = it->second.lock()) return s;
    for (auto e = registry_.begin(); e != registry_.end();) e = e->second.expired() ? registry_.erase(e) : std::next(e);
    std::shared_ptr<T> s = make();
    queue.keep_until_destroyed(s);
    registry_[id] = s;
    return s;
  }

 private:
  std::mutex mutex_;
  std::map<std::uint64_t, std::weak_ptr<T>> registry_;
};

}  // namespace gpurt::lib::vendor
