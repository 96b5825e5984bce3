// Discovery: which backends gpurt has, which devices they offer, and choosing one.
//
// Each backend's plugin is loaded once, the first time that backend is needed (thread-safe):
// device("opencl:0") loads only the OpenCL plugin; backends() and devices() load them all. A backend that
// cannot be used is still listed, with the reason. Selector syntax, used by device(), by
// GPURT_DEVICE and by every command line: BACKEND[:INDEX|:NAME], where NAME is a
// case-insensitive substring of the device name, vendor or platform ("cuda", "cuda:1",
// "opencl:0", "opencl:nvidia", "opencl:pocl").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpurt/device.hpp"
#include "gpurt/types.hpp"

namespace gpurt {

// Every backend gpurt knows ("cuda", "opencl"), available or not, with the reason.
std::vector<BackendInfo> backends();
// One backend's availability, loading only that backend's plugin. Throws invalid_argument for a
// name gpurt does not know.
BackendInfo backend(std::string_view name);
// Every device of every available backend, backend by backend.
std::vector<Device> devices();
// GPURT_DEVICE if set; otherwise a CUDA GPU, then an OpenCL GPU, then an OpenCL CPU, then any.
// Throws backend_unavailable, listing every backend's reason, when there is no device at all.
Device default_device();
// True when `a` and `b` are the same physical device seen through two backends (a CUDA GPU and
// the NVIDIA OpenCL device for it), by UUID, else PCI bus id; false when neither is known.
bool same_physical_device(const Device& a, const Device& b);
// The first device matching `selector`. Throws invalid_argument, listing what exists, when no device
// matches; backend_unavailable, with the backend's reason (BackendInfo::reason), when the selector
// names a backend that cannot be used (docs/errors.md); invalid_argument when it is malformed or
// names no backend gpurt knows.
Device device(std::string_view selector);
// True when `selector` names the device `props` describes, by the rule device() and GPURT_DEVICE use
// (for tools and test harnesses that hold a device's properties, e.g. read from another process).
// Loads no plugin and does not block. Throws invalid_argument when `selector` is malformed.
bool selector_matches(std::string_view selector, const DeviceProperties& props);

}  // namespace gpurt
