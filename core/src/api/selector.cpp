// Parsing and matching of device selectors.
#include "api/selector.hpp"

#include <algorithm>
#include <cctype>

#include "gpurt/error.hpp"
#include "loader/loader.hpp"

namespace gpurt::detail {

namespace {
constexpr const char* syntax =
    "a selector is BACKEND or BACKEND:INDEX or BACKEND:NAME: BACKEND names a plugin (libgpurt_BACKEND.so), "
    "INDEX is the device's position in that backend, NAME part of the device, vendor or platform name "
    "(`gpurt info` lists them all)";

[[noreturn]] void bad(std::string_view text, const std::string& what) {
  ErrorDetails d;
  d.call = "device selector";
  throw Error(ErrorCategory::invalid_argument,
              "device selector '" + std::string(text) + "' is malformed: " + what + "; " + syntax,
              std::move(d));
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}
}  // namespace

std::string selector_syntax() { return syntax; }

void unknown_backend(std::string_view text, const std::string& backend) {
  bad(text, "'" + backend + "' is not a backend gpurt knows (" + known_backend_list() + ")");
}

Selector parse_selector(std::string_view text) {
  Selector sel = parse_selector_syntax(text);
  if (!backend_discovered(sel.backend)) unknown_backend(text, sel.backend);
  return sel;
}

Selector parse_selector_syntax(std::string_view text) {
  if (text.empty()) bad(text, "it is empty");
  Selector sel;
  const auto colon = text.find(':');
  sel.backend = lower(text.substr(0, colon));
  if (sel.backend.empty()) bad(text, "the backend name is missing");
  if (!backend_name_ok(sel.backend))
    bad(text, "'" + sel.backend + "' is not a backend name (lower-case letters, digits and '_')");
  if (colon == std::string_view::npos) return sel;
  const std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) bad(text, "nothing follows ':'");
  if (rest.find(':') != std::string_view::npos) bad(text, "it has more than one ':'");
  if (std::all_of(rest.begin(), rest.end(), [](unsigned char c) { return std::isdigit(c); })) {
    if (rest.size() > 9) bad(text, "the device index is too large");
    sel.kind = Selector::Kind::index;
    sel.index = static_cast<std::size_t>(std::stoul(std::string(rest)));
  } else {
    sel.kind = Selector::Kind::name;
    sel.name = lower(rest);
  }
  return sel;
}

bool selector_matches(const Selector& sel, const DeviceProperties& p) {
  if (p.backend != sel.backend) return false;
  switch (sel.kind) {
    case Selector::Kind::backend_only: return true;
    case Selector::Kind::index: return p.index == sel.index;
    case Selector::Kind::name:
      for (const std::string* field : {&p.name, &p.vendor, &p.platform, &p.platform_version})
        if (lower(*field).find(sel.name) != std::string::npos) return true;
      return false;
  }
  return false;
}

}  // namespace gpurt::detail
