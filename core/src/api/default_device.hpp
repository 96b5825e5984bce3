// Where gpurt::default_device() takes the selector the process names as its default device
// (GPURT_DEVICE). Start-up parses it and installs the source (startup/startup.cpp); the API reads
// no environment and includes nothing of start-up.
#pragma once

#include <optional>
#include <string>

namespace gpurt::detail {

// Called by each default_device(); nullopt when no default is named. It may throw (a malformed
// GPURT_* variable); the value it returns must live for the process.
using DefaultDeviceSource = const std::optional<std::string>& (*)();
// Installs the source; start-up does so while libgpurt is loaded, before any call. With none
// installed no default is named. Thread-safe.
void set_default_device_source(DefaultDeviceSource source) noexcept;

}  // namespace gpurt::detail
