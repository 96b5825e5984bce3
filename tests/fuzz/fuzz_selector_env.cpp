// libFuzzer target: the device selector and every GPURT_* variable. Any input must either parse
// or raise gpurt::Error; nothing else may escape, crash or trip a sanitizer.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "startup/env.hpp"
#include "gpurt/error.hpp"
#include "api/selector.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const gpurt::detail::Selector sel = gpurt::detail::parse_selector_syntax(text);
    gpurt::DeviceProperties p;
    p.backend = sel.backend;
    p.name = text;
    p.platform_version = text;
    (void)gpurt::detail::selector_matches(sel, p);
  } catch (const gpurt::Error&) {
  }
  // The same bytes, split at newlines, as the values of the variables.
  static const char* names[] = {"GPURT_DEVICE", "GPURT_PLUGIN_PATH", "GPURT_DISABLE_BACKENDS", "GPURT_LOG",
                                "GPURT_CACHE", "GPURT_CACHE_DIR", "GPURT_STAGING", "GPURT_STAGING_THREADS",
                                "GPURT_TRACE", "HOME", "XDG_CACHE_HOME"};
  std::vector<std::string> values(sizeof names / sizeof names[0]);
  std::size_t v = 0;
  for (char c : text) {
    if (c == '\n') {
      if (++v == values.size()) break;
    } else if (c != '\0') {
      values[v] += c;
    }
  }
  try {
    (void)gpurt::detail::parse_environment([&](const char* name) -> const char* {
      for (std::size_t i = 0; i < values.size(); ++i)
        if (std::string(name) == names[i]) return values[i].empty() ? nullptr : values[i].c_str();
      return nullptr;
    });
  } catch (const gpurt::Error&) {
  }
  return 0;
}
