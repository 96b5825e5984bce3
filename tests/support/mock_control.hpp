// The mock backend's control functions (backends/mock/mock_control.h) for contract cases: failure
// injection, the lost-device switch, object counts and native reference counts, reached with dlsym
// on the plugin instance the core loaded. Only where the mock backend is built (GPURT_MOCK_PLUGIN).
#pragma once

#ifdef GPURT_MOCK_PLUGIN
#include <dlfcn.h>

#include "mock_control.h"

namespace gpurt::test {

struct MockControl {
  gpurt_mock_fail_fn fail = nullptr;
  gpurt_mock_reset_fn reset = nullptr;
  gpurt_mock_references_fn references = nullptr;
  gpurt_mock_retain_fn retain = nullptr;
  gpurt_mock_lose_device_fn lose = nullptr;
  gpurt_mock_counts_fn counts = nullptr;
  // The plugin the core loaded, with its injected failures cleared; all null when the mock backend
  // is not in use.
  static MockControl get() {
    MockControl c;
    void* h = ::dlopen(GPURT_MOCK_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
    if (!h) return c;
    c.fail = reinterpret_cast<gpurt_mock_fail_fn>(::dlsym(h, "gpurt_mock_fail"));
    c.reset = reinterpret_cast<gpurt_mock_reset_fn>(::dlsym(h, "gpurt_mock_reset"));
    c.references = reinterpret_cast<gpurt_mock_references_fn>(::dlsym(h, "gpurt_mock_references"));
    c.retain = reinterpret_cast<gpurt_mock_retain_fn>(::dlsym(h, "gpurt_mock_retain"));
    c.lose = reinterpret_cast<gpurt_mock_lose_device_fn>(::dlsym(h, "gpurt_mock_lose_device"));
    c.counts = reinterpret_cast<gpurt_mock_counts_fn>(::dlsym(h, "gpurt_mock_counts"));
    if (c.reset) c.reset();
    return c;
  }
  explicit operator bool() const { return fail && reset && references && retain && lose && counts; }
  gpurt_mock_counters now() const {
    gpurt_mock_counters out{};
    counts(&out);
    return out;
  }
};

}  // namespace gpurt::test
#endif
