// The kernel library's vendor path (internal to libgpurt-lib): the backend's BLAS - cuBLAS on CUDA,
// CLBlast on OpenCL - found at run time and called on gpurt's buffers and queue through their native
// handles (gpurt/native.hpp), as an application would. The adapters that speak each vendor's API live
// under backends/<name>/lib/ (the only place vendor headers may be included); this header and the
// library's host code see gpurt types only.
#pragma once

#include <cstddef>
#include <string>

#include "gpurt/buffer.hpp"
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
// through the vendor library. The buffers are native handles of views (offset_bytes included);
// sizes were checked by the caller, m, n, k > 0. Throws gpurt::Error naming the vendor call on failure.
struct GemmArgs {
  Precision precision = Precision::fp32;
  NativeHandle a, b, c;
  std::size_t m = 0, n = 0, k = 0;
};
void gemm(Queue& queue, const GemmArgs& args);

}  // namespace gpurt::lib::vendor
