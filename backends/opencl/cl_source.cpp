// What the OpenCL compiler is given for portable sources, and mapping its line numbers back.
#include <algorithm>
#include <cstring>
#include <cctype>

#include "cl_common.hpp"
#include "cl_prelude.hpp"
#include "gpurt/plugin/signature.hpp"

namespace gpurt::opencl {

namespace {

bool has_any(const plugin::ParamDecl& p, std::initializer_list<const char*> words) {
  for (const char* w : words)
    if (p.has_word(w)) return true;
  return false;
}

// Global pointer parameters of portable kernels take a base and a byte offset, so that a view at
// any element offset can be passed without a sub-buffer (whose start OpenCL aligns to
// CL_DEVICE_MEM_BASE_ADDR_ALIGN). `GPURT_GLOBAL const float* GPURT_RESTRICT x` becomes
// `GPURT_GLOBAL const float* GPURT_RESTRICT x__gpurt_base, ulong x__gpurt_off`, and the body
// starts by declaring `x` as base + offset. Every insertion stays on its line, so the compiler's
// line numbers still match the user's source.
std::string with_view_offsets(const std::string& text, ViewOffsets& offsets) {
  struct Insert {
    std::size_t at;
    std::string what;
  };
  std::vector<Insert> edits;
  for (const plugin::KernelDecl& k : plugin::scan_kernels(text, {"GPURT_KERNEL"})) {
    std::vector<bool> flags;
    std::string prologue;
    for (const plugin::ParamDecl& p : k.params) {
      const bool global = !p.macro_call && !p.name.empty() && p.has_word("*") && !p.has_word("[") &&
                          has_any(p, {"GPURT_GLOBAL", "__global", "global", "GPURT_CONSTANT", "__constant", "constant"});
      flags.push_back(global);
      if (!global) continue;
      edits.push_back({p.name_end, "__gpurt_base, ulong " + p.name + "__gpurt_off"});
      std::string decl, cast;
      for (const std::string& w : p.words) {
        decl += w + " ";
        if (w != "GPURT_RESTRICT" && w != "restrict" && w != "__restrict") cast += w + " ";
      }
      const char* space = has_any(p, {"GPURT_CONSTANT", "__constant", "constant"}) ? "__constant" : "__global";
      prologue += " " + decl + p.name + " = (" + cast + ")((" + space + " const uchar*)" + p.name +
                  "__gpurt_base + " + p.name + "__gpurt_off);";
    }
    auto& alternatives = offsets[k.name];
    if (std::find(alternatives.begin(), alternatives.end(), flags) == alternatives.end())
      alternatives.push_back(flags);
    if (k.body != plugin::no_position && !prologue.empty()) edits.push_back({k.body, prologue});
  }
  // Kernels none of whose definitions takes a global pointer travel as written.
  for (auto it = offsets.begin(); it != offsets.end();) {
    bool any = false;
    for (const auto& flags : it->second) any = any || std::find(flags.begin(), flags.end(), true) != flags.end();
    it = any ? std::next(it) : offsets.erase(it);
  }
  std::sort(edits.begin(), edits.end(), [](const Insert& a, const Insert& b) { return a.at < b.at; });
  std::string out;
  out.reserve(text.size() + 64 * edits.size());
  std::size_t from = 0;
  for (const Insert& e : edits) {
    out.append(text, from, e.at - from);
    out += e.what;
    from = e.at;
  }
  out.append(text, from, std::string::npos);
  return out;
}

}  // namespace

const std::vector<bool>* choose_view_offsets(const std::vector<std::vector<bool>>& alternatives,
                                             std::size_t native_params) {
  const std::vector<bool>* chosen = nullptr;
  for (const std::vector<bool>& flags : alternatives) {
    const auto pairs = static_cast<std::size_t>(std::count(flags.begin(), flags.end(), true));
    if (flags.size() + pairs != native_params) continue;
    if (chosen) return nullptr;  // alternatives are distinct: two that fit cannot be told apart
    chosen = &flags;
  }
  return chosen;
}

// What the compiler sees: portable sources get the dialect's prelude, then a #line directive so
// messages keep the user's line numbers, then the source with view offsets added.
CompiledSource full_source(const plugin::ProgramSource& source) {
  CompiledSource out;
  if (source.language != SourceLanguage::portable) {
    out.text = source.text;
    return out;
  }
  out.text = std::string(portable_prelude) + "#line 1 \"" + source.name + "\"\n" +
             with_view_offsets(source.text, out.view_offsets);
  return out;
}

// Compilers that ignore #line (NVIDIA's reports "<kernel>:56:10") count the prelude's lines; move
// such line numbers back onto the user's source.
std::string remap_prelude_lines(const std::string& log, const std::string& name, long header_lines) {
  const long prelude_lines =
      static_cast<long>(std::count(portable_prelude, portable_prelude + std::strlen(portable_prelude), '\n')) + 1;
  return map_log_locations(log, name, prelude_lines + header_lines);
}

long define_header_lines(const std::string& text) noexcept {
  long lines = 0;
  std::size_t at = 0;
  while (text.compare(at, 8, "#define ") == 0) {
    const std::size_t nl = text.find('\n', at);
    if (nl == std::string::npos) return 0;
    ++lines;
    at = nl + 1;
  }
  return lines > 0 && text.compare(at, 9, "#line 1 \"") == 0 ? lines + 1 : 0;
}

namespace {
// A file name the compiler gave the source it was handed: "<kernel>", "<source>", or PoCL's
// temporary copy ".../tempfile_XXXXXX.cl" (or ".../tempfile.cl").
bool compiler_file_name(const std::string& log, std::size_t from, std::size_t to) {
  const std::string token = log.substr(from, to - from);
  if (token == "<kernel>" || token == "<source>") return true;
  const auto slash = token.rfind('/');
  const std::string base = slash == std::string::npos ? token : token.substr(slash + 1);
  return base.size() > 3 && base.compare(0, 8, "tempfile") == 0 && base.compare(base.size() - 3, 3, ".cl") == 0;
}
}  // namespace

// One linear pass: each "FILE:LINE:" whose FILE is a compiler_file_name() becomes "name:LINE':",
// LINE' = LINE - prelude_lines (locations inside the prelude keep the compiler's own name).
std::string map_log_locations(const std::string& log, const std::string& name, long prelude_lines) {
  std::string out;
  out.reserve(log.size());
  std::size_t copied = 0;  // log[0, copied) is in `out`
  for (std::size_t i = 0; i < log.size(); ++i) {
    if (log[i] != ':') continue;
    std::size_t j = i + 1;
    long line = 0;
    while (j < log.size() && j - i <= 9 && log[j] >= '0' && log[j] <= '9') line = line * 10 + (log[j++] - '0');
    if (j == i + 1 || j >= log.size() || log[j] != ':') continue;
    std::size_t start = i;
    while (start > copied && !std::isspace(static_cast<unsigned char>(log[start - 1])) && log[start - 1] != '"' &&
           log[start - 1] != '\'' && log[start - 1] != '(')
      --start;
    if (start == i || !compiler_file_name(log, start, i) || line <= prelude_lines) continue;
    out.append(log, copied, start - copied);
    out += name + ":" + std::to_string(line - prelude_lines) + ":";
    copied = i = j + 1;
    --i;  // the loop's ++i lands on the first character after the location
  }
  out.append(log, copied, std::string::npos);
  return out;
}

}  // namespace gpurt::opencl
