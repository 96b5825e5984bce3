// The device selector syntax: BACKEND[:INDEX|:NAME]. One parser for the API, GPURT_DEVICE and
// every command line.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpurt/types.hpp"

namespace gpurt::detail {

struct Selector {
  enum class Kind { backend_only, index, name };
  std::string backend;
  Kind kind = Kind::backend_only;
  std::size_t index = 0;
  std::string name;  // lower case
};

// Throws Error(invalid_argument) saying what is wrong with `text` and what the syntax is,
// including a backend name for which no plugin was found.
Selector parse_selector(std::string_view text);
// Throws what parse_selector does for a backend gpurt does not know (also for a test-only plugin
// found but left out: GPURT_ENABLE_MOCK).
[[noreturn]] void unknown_backend(std::string_view text, const std::string& backend);
// The syntax alone (any well-formed backend name).
Selector parse_selector_syntax(std::string_view text);
// "a selector is BACKEND or ...": the syntax, for messages.
std::string selector_syntax();

// True when `props` is what `sel` asks for.
bool selector_matches(const Selector& sel, const DeviceProperties& props);

}  // namespace gpurt::detail
