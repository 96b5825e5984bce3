// What Device::build hands the compiler: the escaped program name, the define lines, and the
// include scan behind the compile cache's "sources that read other files are not cached" rule.
#include "services/build_text.hpp"

#include <vector>

#include "base/text.hpp"
#include "model/state.hpp"

namespace gpurt::detail {

namespace {

bool horizontal_space(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }
bool newline(char c) { return c == '\n' || c == '\r'; }
bool identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

// `text` with its lines joined as translation phase 2 joins them: a backslash right before a line
// break disappears with it. `lax`: also when spaces stand between them (GCC and clang accept that);
// `trigraphs`: also the trigraph ??/ as the backslash. Line breaks are \n, \r\n and \r.
std::string join_lines(const std::string& text, bool lax, bool trigraphs) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t k = std::string::npos;  // just past the backslash
    if (text[i] == '\\') k = i + 1;
    else if (trigraphs && text.compare(i, 3, "?\?/") == 0) k = i + 3;
    if (k != std::string::npos) {
      while (lax && k < text.size() && horizontal_space(text[k])) ++k;
      if (k < text.size() && newline(text[k])) {
        i = k + (text[k] == '\r' && k + 1 < text.size() && text[k + 1] == '\n' ? 2 : 1);
        continue;
      }
    }
    out += text[i++];
  }
  return out;
}

// Whether `s` (lines already joined) has an include-like directive. A directive's '#' is preceded
// on its line only by blanks and /* */ comments, so it is looked for after every line break and
// after every "*/" (a comment may begin on an earlier line). Where the text really is inside a
// string or a comment, this finds directives that are not there, which only costs caching.
bool has_include_directive(const std::string& s) {
  const std::size_t n = s.size();
  // close[i]: where the first "*/" at or after i begins (n when none), so a comment is skipped
  // in one step.
  std::vector<std::size_t> close(n + 2, n);
  for (std::size_t i = n; i-- > 0;) close[i] = (i + 1 < n && s[i] == '*' && s[i + 1] == '/') ? i : close[i + 1];
  // After a comment the scan goes on the same way whichever candidate it started from, so each
  // such point is scanned once: this keeps the whole scan linear.
  std::vector<bool> continued(n + 1, false);
  auto skip_blanks = [&](std::size_t p, bool remember) -> std::size_t {
    for (;;) {
      if (p < n && horizontal_space(s[p])) ++p;
      else if (s.compare(p, 3, "\xEF\xBB\xBF") == 0) p += 3;  // a byte order mark
      else if (p + 1 < n && s[p] == '/' && s[p + 1] == '*') {
        p = close[p + 2] + 2;
        if (p > n) return n;  // unterminated
        if (remember) {
          if (continued[p]) return n;  // already scanned from here
          continued[p] = true;
        }
      } else return p;
    }
  };
  auto examine = [&](std::size_t p) {
    p = skip_blanks(p, true);
    if (p >= n) return false;
    if (s[p] == '#') p += 1;
    else if (s.compare(p, 2, "%:") == 0) p += 2;        // digraph
    else if (s.compare(p, 3, "?\?=") == 0) p += 3;      // trigraph
    else return false;
    p = skip_blanks(p, false);
    std::size_t e = p;
    while (e < n && identifier_char(s[e])) ++e;
    const std::string word = s.substr(p, e - p);
    return word == "include" || word == "include_next" || word == "import" || word == "embed";
  };
  if (examine(0)) return true;
  for (std::size_t i = 0; i < n; ++i) {
    if (newline(s[i]) && examine(i + 1)) return true;
    if (s[i] == '*' && i + 1 < n && s[i + 1] == '/' && !continued[i + 2] && examine(i + 2)) return true;
  }
  return false;
}

void require_identifier(const std::string& name, const char* call, const DeviceState* device) {
  bool ok = !name.empty() && !(name[0] >= '0' && name[0] <= '9');
  for (char c : name) ok = ok && identifier_char(c) && c != '$';
  if (!ok)
    invalid("the define name '" + line_directive_name(name) +
                "' is not an identifier (letters, digits and _, not starting with a digit); a define is "
                "a name and a value, and other compiler options go in BuildOptions::flags",
            call, device);
}

// Why `value` cannot be the body of one #define line (empty when it can).
std::string unfit_value(const std::string& value) {
  for (char c : value)
    if (c == '\n' || c == '\r' || c == '\0')
      return "contains a line break or NUL; a define's value is one line";
  std::size_t end = value.size();
  while (end > 0 && horizontal_space(value[end - 1])) --end;
  if ((end >= 1 && value[end - 1] == '\\') || (end >= 3 && value.compare(end - 3, 3, "?\?/") == 0))
    return "ends in a backslash, which would continue the #define onto the source's next line; remove it";
  const std::size_t open = value.rfind("/*");
  if (open != std::string::npos && value.find("*/", open + 2) == std::string::npos)
    return "opens a /* comment it does not close, which would comment out the source that follows; "
           "close it or remove it";
  return {};
}

}  // namespace

std::string line_directive_name(const std::string& name) {
  std::string out;
  out.reserve(name.size());
  for (char c : escape_invalid_utf8(name, "\\")) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\' || c == '"' || c == '?') {  // '?': no two in a row, so no trigraph
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      out += '_';
    } else {
      out += c;
    }
  }
  return out;
}

std::string define_lines(const std::vector<std::pair<std::string, std::string>>& defines,
                         const std::string& line_name, const char* call, const DeviceState* device) {
  if (defines.empty()) return {};
  std::string out;
  for (const auto& [name, value] : defines) {
    require_identifier(name, call, device);
    const std::string why = unfit_value(value);
    if (!why.empty()) invalid("the value of define '" + name + "' " + why, call, device);
    out += "#define " + name + " " + (value.empty() ? std::string("1") : value) + "\n";
  }
  return out + "#line 1 \"" + line_name + "\"\n";
}

std::string defines_as_options(const std::vector<std::pair<std::string, std::string>>& defines) {
  std::string out;
  for (const auto& [name, value] : defines)
    out += (out.empty() ? "-D" : " -D") + name + (value.empty() ? "" : "=" + value);
  return out;
}

bool reads_other_files(const std::string& text) {
  // One pass per way a compiler may join lines, so no reading of the text is missed.
  for (bool lax : {false, true})
    for (bool trigraphs : {false, true}) {
      const std::string s = join_lines(text, lax, trigraphs);
      if (s.find("__has_include") != std::string::npos || s.find("__has_embed") != std::string::npos ||
          has_include_directive(s))
        return true;
    }
  return false;
}

bool option_reads_files(const std::string& option) {
  return option.find("include") != std::string::npos || option.find("imacros") != std::string::npos ||
         (!option.empty() && option[0] == '@');
}

}  // namespace gpurt::detail
