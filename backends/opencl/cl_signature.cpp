// Kernel signatures read from OpenCL C source, for drivers that cannot give argument info.
//
// gpurt builds with -cl-kernel-arg-info; where that build fails (NVIDIA's compiler emits invalid
// PTX for parameterless kernels with it) the program is rebuilt without it, and the kinds of the
// kernels' parameters come from here instead: each `kernel`/`__kernel`/`GPURT_KERNEL` function's
// parameter list,
// split at top-level commas, classified by address-space qualifier, scalar sizes by type name.
// A parameter this cannot classify stays `unknown`; a kernel whose parsed parameter count differs
// from the driver's is not used at all.
#include <cctype>
#include <regex>

#include "cl_common.hpp"

namespace gpurt::opencl {

namespace {

std::string strip_comments(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      out += '\n';
    } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) ++i;
      ++i;
      out += ' ';
    } else {
      out += s[i];
    }
  }
  return out;
}

std::vector<std::string> words(const std::string& param) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : param) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      cur += c;
    } else {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
      if (c == '*') out.push_back("*");
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

plugin::ParamInfo classify(const std::string& param, unsigned address_bits) {
  plugin::ParamInfo p;
  std::vector<std::string> type;
  bool pointer = false, global = false, local = false;
  const std::vector<std::string> w = words(param);
  if (!w.empty() && w[0] == "GPURT_DYNAMIC_LOCAL") {  // the portable dialect's dynamic local memory
    p.kind = plugin::ParamKind::local_pointer;
    p.type_name = (w.size() > 1 ? w[1] : std::string("?")) + "*";
    return p;
  }
  for (const std::string& t : w) {
    if (t == "__global" || t == "global" || t == "__constant" || t == "constant" || t == "GPURT_GLOBAL" ||
        t == "GPURT_CONSTANT")
      global = true;
    else if (t == "__local" || t == "local" || t == "GPURT_LOCAL") local = true;
    else if (t == "*") pointer = true;
    else if (t != "const" && t != "volatile" && t != "restrict" && t != "__restrict" && t != "__private" &&
             t != "private" && t != "GPURT_RESTRICT")
      type.push_back(t);
  }
  if (!type.empty()) type.pop_back();  // the last word is the parameter's name
  std::string name;
  for (const auto& t : type) name += (name.empty() ? "" : " ") + t;
  p.type_name = name + (pointer ? "*" : "");
  if (pointer && global) {
    p.kind = plugin::ParamKind::global_pointer;
    p.size = sizeof(cl_mem);
  } else if (pointer && local) {
    p.kind = plugin::ParamKind::local_pointer;
  } else if (!pointer && !global && !local && !name.empty() && name.find("image") == std::string::npos &&
             name != "sampler_t") {
    p.kind = plugin::ParamKind::scalar;
    p.size = scalar_type_size(name, address_bits);
  }
  return p;
}

}  // namespace

std::map<std::string, std::vector<plugin::ParamInfo>> parse_kernel_signatures(const std::string& source,
                                                                              unsigned address_bits) {
  std::map<std::string, std::vector<plugin::ParamInfo>> out;
  const std::string text = strip_comments(source);
  static const std::regex header(
      R"((?:^|[^A-Za-z0-9_])(?:__kernel|kernel|GPURT_KERNEL)\s+(?:__attribute__\s*\(\([^;{]*?\)\)\s*)*void\s+([A-Za-z_][A-Za-z0-9_]*)\s*\()");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), header); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1].str();
    std::size_t pos = static_cast<std::size_t>(it->position(0) + it->length(0));
    int depth = 1;
    std::string current;
    std::vector<std::string> params;
    for (; pos < text.size() && depth > 0; ++pos) {
      const char c = text[pos];
      if (c == '(') ++depth;
      if (c == ')' && --depth == 0) break;
      if (c == ',' && depth == 1) {
        params.push_back(current);
        current.clear();
      } else {
        current += c;
      }
    }
    if (depth != 0) continue;
    if (current.find_first_not_of(" \t\r\n") != std::string::npos && words(current) != std::vector<std::string>{"void"})
      params.push_back(current);
    std::vector<plugin::ParamInfo> info;
    for (const auto& p : params) info.push_back(classify(p, address_bits));
    out[name] = std::move(info);
  }
  return out;
}

}  // namespace gpurt::opencl
