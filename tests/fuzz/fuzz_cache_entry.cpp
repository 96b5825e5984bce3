// libFuzzer target: the compile cache's entry reader, and the build inputs the cache key rests on.
// Any bytes must be accepted as an entry only when they are a well-formed one no larger than the
// bound (88 bytes of header and the payload's record, then the payload), else rejected; the include
// scan must finish on any text; a program name escaped for #line must never be able to end its string or line; define lines are exactly
// one line per define plus the #line, or a typed error. Never crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "services/build_text.hpp"
#include "services/cache.hpp"
#include "gpurt/error.hpp"

namespace {
void check_line_name(const std::string& bytes) {
  const std::string name = gpurt::detail::line_directive_name(bytes);
  for (std::size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7f) __builtin_trap();  // no line break, no control character
    if (c == '"' || c == '?') __builtin_trap();    // only escaped ones, skipped below
    if (c == '\\') {
      if (i + 1 >= name.size() || (name[i + 1] != '\\' && name[i + 1] != '"' && name[i + 1] != '?')) __builtin_trap();
      ++i;
    }
  }
}

void check_define_lines(const std::string& bytes) {
  const std::size_t cut = bytes.find('=');
  const std::string name = bytes.substr(0, cut), value = cut == std::string::npos ? "" : bytes.substr(cut + 1);
  try {
    const std::string text = gpurt::detail::define_lines({{name, value}}, "f", "fuzz", nullptr);
    std::size_t lines = 0;
    for (char c : text) lines += c == '\n' || c == '\r' || c == '\0';
    if (lines != 2 || text.compare(0, 8 + name.size(), "#define " + name) != 0) __builtin_trap();
  } catch (const gpurt::Error& e) {
    if (e.category() != gpurt::ErrorCategory::invalid_argument) __builtin_trap();
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::string payload;
  if (gpurt::detail::parse_cache_entry("fuzz", bytes, payload) &&
      (payload.size() + 88 != bytes.size() || payload.size() > gpurt::max_cache_entry_bytes))
    __builtin_trap();
  (void)gpurt::detail::reads_other_files(bytes);
  check_line_name(bytes);
  check_define_lines(bytes);
  return 0;
}
