// Test plugins for the loader, one per FAKE_MODE: each fails in one way a real plugin can.
#include "gpurt/plugin/api.hpp"

#if FAKE_MODE == 4
extern "C" int gpurt_fake_vendor_function();
#endif

#if FAKE_MODE != 0  // mode 0 exports no entry point at all
GPURT_PLUGIN_EXPORT std::uint32_t gpurt_plugin_abi_version() {
#if FAKE_MODE == 1
  return 999;
#else
  return gpurt::plugin::abi_version;
#endif
}

GPURT_PLUGIN_EXPORT void gpurt_plugin_entry_v1(const gpurt::plugin::Host*,
                                               gpurt::plugin::EntryResult* out) noexcept {
#if FAKE_MODE == 2
  out->status = gpurt::BackendStatus::no_device;
  out->reason = "the fake driver sees no device";
  out->native_text = "FAKE_ERROR_NO_DEVICE (100)";
#elif FAKE_MODE == 3
  out->status = gpurt::BackendStatus::init_failed;
  out->reason = "the fake driver failed to initialise";
  out->native_text = "fakeInit: FAKE_ERROR_NOT_INITIALIZED (3)";
#elif FAKE_MODE == 4
  out->status = gpurt::BackendStatus::init_failed;
  out->native_text = std::to_string(gpurt_fake_vendor_function());
#endif
}
#endif
