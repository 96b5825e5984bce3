// What the OpenCL compiler is given for portable sources, and mapping its line numbers back.
#include <algorithm>
#include <cstring>
#include <regex>

#include "cl_common.hpp"
#include "cl_prelude.hpp"

namespace gpurt::opencl {

// What the compiler sees: portable sources get the dialect's prelude, then a #line directive so
// messages keep the user's line numbers.
std::string full_source(const plugin::ProgramSource& source) {
  if (source.language != SourceLanguage::portable) return source.text;
  return std::string(portable_prelude) + "#line 1 \"" + source.name + "\"\n" + source.text;
}

// Compilers that ignore #line (NVIDIA's reports "<kernel>:56:10") count the prelude's lines; move
// such line numbers back onto the user's source.
std::string remap_prelude_lines(const std::string& log, const std::string& name) {
  const long prelude_lines =
      static_cast<long>(std::count(portable_prelude, portable_prelude + std::strlen(portable_prelude), '\n')) + 1;
  static const std::regex located(R"(<kernel>:(\d{1,9}):)");  // at most 9 digits: fits a long
  std::string out;
  auto last = log.cbegin();
  for (auto it = std::sregex_iterator(log.begin(), log.end(), located); it != std::sregex_iterator(); ++it) {
    const long line = std::stol((*it)[1].str());
    out.append(last, log.cbegin() + it->position(0));
    out += line > prelude_lines ? name + ":" + std::to_string(line - prelude_lines) + ":" : it->str();
    last = log.cbegin() + it->position(0) + it->length(0);
  }
  out.append(last, log.cend());
  return out;
}

}  // namespace gpurt::opencl
