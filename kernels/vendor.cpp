// Skeleton of the vendor path (filled in by the vendor adapters' change): nothing is found yet.
#include "vendor.hpp"

#include "gpurt/error.hpp"

namespace gpurt::lib::vendor {

VendorLibraryInfo info(const Device& device) {
  VendorLibraryInfo out;
  out.reason = "no vendor library adapter for backend '" + device.backend() + "' in this build";
  return out;
}

bool covers(const Device& device, Precision, std::string& why) {
  why = info(device).reason;
  return false;
}

void gemm(Queue& queue, const GemmArgs&) {
  throw Error(ErrorCategory::unsupported, "no vendor library adapter in this build",
              ErrorDetails{queue.device().backend(), 0, {}, "gpurt::lib::matmul", queue.device().description(), {}, {}});
}

}  // namespace gpurt::lib::vendor
