// Kernel signatures from C-family source in one linear pass (see gpurt/plugin/signature.hpp).
#include "gpurt/plugin/signature.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace gpurt::plugin {

namespace {

struct Token {
  enum class Kind { identifier, punct, other } kind;
  std::size_t begin, end;
  char c;  // punct: the character
};

// Bytes of UTF-8 sequences (0x80 and above) belong to identifiers: C takes universal characters in
// names, and clang and NVRTC read "größe" as one identifier.
bool ident_start(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return std::isalpha(u) || c == '_' || u >= 0x80;
}
bool ident_char(char c) { return ident_start(c) || std::isdigit(static_cast<unsigned char>(c)); }

// The length of a line continuation (a backslash and \n, \r\n or \r) at s[i]; 0 when there is none.
std::size_t continuation(const std::string& s, std::size_t i) {
  if (s[i] != '\\' || i + 1 >= s.size()) return 0;
  if (s[i + 1] == '\n') return 2;
  if (s[i + 1] == '\r') return i + 2 < s.size() && s[i + 2] == '\n' ? 3 : 2;
  return 0;
}

// Splits `s` into tokens, dropping whitespace, comments, literals and preprocessor lines.
std::vector<Token> tokenize(const std::string& s) {
  std::vector<Token> out;
  const std::size_t n = s.size();
  std::size_t i = 0;
  bool line_start = true;  // only whitespace since the last newline
  while (i < n) {
    const char c = s[i];
    if (c == '\n' || c == '\r') {
      line_start = true;
      ++i;
      continue;
    }
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n' && s[i] != '\r') i += std::max<std::size_t>(1, continuation(s, i));
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      const std::size_t e = s.find("*/", i + 2);
      i = e == std::string::npos ? n : e + 2;
      continue;
    }
    if (c == '#' && line_start) {  // a directive, with its continuation lines
      while (i < n && s[i] != '\n' && s[i] != '\r') i += std::max<std::size_t>(1, continuation(s, i));
      continue;
    }
    line_start = false;
    if (c == '"' || c == '\'') {
      ++i;
      while (i < n && s[i] != c && s[i] != '\n' && s[i] != '\r')
        i += continuation(s, i) ? continuation(s, i) : (s[i] == '\\' && i + 1 < n) ? 2 : 1;
      if (i < n && s[i] == c) ++i;
      continue;
    }
    if (ident_start(c)) {
      const std::size_t b = i;
      while (i < n && ident_char(s[i])) ++i;
      out.push_back({Token::Kind::identifier, b, i, 0});
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const std::size_t b = i;
      while (i < n && (ident_char(s[i]) || s[i] == '.')) ++i;
      out.push_back({Token::Kind::other, b, i, 0});
      continue;
    }
    out.push_back({Token::Kind::punct, i, i + 1, c});
    ++i;
  }
  return out;
}

bool is_attribute_word(const std::string& w) {
  return w == "__attribute__" || w == "__launch_bounds__" || w == "__declspec" || w == "alignas" ||
         w == "__cluster_dims__" || w == "__maxnreg__";
}

const char* const type_keywords[] = {"void",   "char",  "short",    "int",     "long",   "float",
                                      "double", "half",  "unsigned", "signed",  "bool",   "size_t",
                                      "uchar",  "ushort", "uint",    "ulong",   "const",  "volatile"};

bool is_type_keyword(const std::string& w) {
  for (const char* k : type_keywords)
    if (w == k) return true;
  return false;
}

// Words that qualify a type without changing what it holds.
bool is_qualifier(const std::string& w) {
  static const char* const q[] = {"const", "volatile", "restrict", "__restrict", "__restrict__",
                                  "GPURT_RESTRICT", "GPURT_GLOBAL", "GPURT_CONSTANT", "GPURT_LOCAL",
                                  "__global", "global", "__constant", "constant", "__local", "local",
                                  "__private", "private", "__generic", "generic", "struct",
                                  "__read_only", "__write_only", "read_only", "write_only", "register"};
  for (const char* k : q)
    if (w == k) return true;
  return false;
}

// For each opening token, the index of the token that closes it (t.size() when none does), in one
// pass with a stack: `parens_only` matches ( with ), otherwise any of ( [ { with any of ) ] }. The
// scan looks an opening's end up here instead of walking forward from it, which made a text of many
// unclosed kernel heads quadratic (40,000 heads took 9 s).
std::vector<std::size_t> closing(const std::vector<Token>& t, bool parens_only) {
  std::vector<std::size_t> out(t.size(), t.size());
  std::vector<std::size_t> open;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != Token::Kind::punct) continue;
    const char c = t[i].c;
    if (c == '(' || (!parens_only && (c == '[' || c == '{'))) {
      open.push_back(i);
    } else if ((c == ')' || (!parens_only && (c == ']' || c == '}'))) && !open.empty()) {
      out[open.back()] = i;
      open.pop_back();
    }
  }
  return out;
}

std::size_t skip_group(const std::vector<std::size_t>& paren_close, std::size_t i) {  // t[i] is '('
  return paren_close[i] == paren_close.size() ? paren_close.size() : paren_close[i] + 1;
}

ParamDecl make_param(const std::string& s, const std::vector<Token>& t, std::size_t b, std::size_t e) {
  ParamDecl p;
  if (b >= e) return p;
  p.begin = t[b].begin;
  p.end = t[e - 1].end;
  std::vector<std::pair<std::string, std::size_t>> words;  // word, end offset; depth-1 only
  int depth = 0;
  for (std::size_t i = b; i < e; ++i) {
    const Token& k = t[i];
    if (k.kind == Token::Kind::punct) {
      if (k.c == '(' || k.c == '[') {
        if (depth == 0 && k.c == '(' && i == b + 1) p.macro_call = true;
        if (depth == 0 && k.c == '[') words.emplace_back("[", k.end);
        ++depth;
      } else if (k.c == ')' || k.c == ']') {
        --depth;
      } else if (depth == 0 && (k.c == '*' || k.c == '&')) {
        words.emplace_back(std::string(1, k.c), k.end);
      }
    } else if (k.kind == Token::Kind::identifier && (depth == 0 || p.macro_call)) {
      words.emplace_back(s.substr(k.begin, k.end - k.begin), k.end);
    }
  }
  // The name is the last identifier (before any array brackets) when something precedes it and
  // it is not itself a type word.
  std::size_t name_at = words.size();
  for (std::size_t i = words.size(); i-- > 0;) {
    if (words[i].first == "[") continue;
    if (ident_start(words[i].first[0])) name_at = i;
    break;
  }
  if (name_at < words.size() && name_at > 0 && !is_type_keyword(words[name_at].first) &&
      !is_qualifier(words[name_at].first)) {
    p.name = words[name_at].first;
    p.name_end = words[name_at].second;
    words.erase(words.begin() + static_cast<long>(name_at));
  }
  for (auto& w : words) p.words.push_back(std::move(w.first));
  return p;
}

bool is_keyword(const std::string& s, const Token& k, std::initializer_list<const char*> keywords) {
  const std::size_t len = k.end - k.begin;
  for (const char* w : keywords)
    if (std::strlen(w) == len && s.compare(k.begin, len, w) == 0) return true;
  return false;
}

}  // namespace

std::string ParamDecl::type_name() const {
  std::string out;
  for (const std::string& w : words) {
    if (is_qualifier(w)) continue;
    if (w == "*" || w == "[" || w == "&") {
      out += "*";
      continue;
    }
    if (!out.empty() && out.back() != '*') out += ' ';
    out += w;
  }
  return out;
}

bool ParamDecl::has_word(const char* w) const {
  for (const std::string& x : words)
    if (x == w) return true;
  return false;
}

std::vector<KernelDecl> scan_kernels(const std::string& source, std::initializer_list<const char*> keywords) {
  std::vector<KernelDecl> out;
  const std::vector<Token> t = tokenize(source);
  const std::vector<std::size_t> paren_close = closing(t, true), bracket_close = closing(t, false);
  auto word = [&](std::size_t i) { return source.substr(t[i].begin, t[i].end - t[i].begin); };
  auto punct = [&](std::size_t i, char c) { return i < t.size() && t[i].kind == Token::Kind::punct && t[i].c == c; };
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t[i].kind != Token::Kind::identifier || !is_keyword(source, t[i], keywords)) continue;
    // Find the name: the first identifier followed by '(' that is not an attribute.
    std::size_t j = i + 1;
    std::size_t name = t.size();
    while (j < t.size()) {
      if (t[j].kind == Token::Kind::punct && (t[j].c == ';' || t[j].c == '{' || t[j].c == '}' || t[j].c == '='))
        break;
      if (t[j].kind == Token::Kind::identifier && is_keyword(source, t[j], keywords)) break;
      if (t[j].kind == Token::Kind::identifier && punct(j + 1, '(')) {
        if (is_attribute_word(word(j))) {
          j = skip_group(paren_close, j + 1);
          continue;
        }
        name = j;
        break;
      }
      ++j;
    }
    if (name == t.size()) continue;
    KernelDecl k;
    k.name = word(name);
    // The parameter list, split at top-level commas.
    if (bracket_close[name + 1] == t.size()) continue;  // unbalanced: not a signature this can read
    std::size_t p = name + 2, start = p;
    int depth = 1;
    for (; p < t.size(); ++p) {
      if (t[p].kind != Token::Kind::punct) continue;
      const char c = t[p].c;
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (--depth == 0) break;
      }
      if (c == ',' && depth == 1) {
        k.params.push_back(make_param(source, t, start, p));
        start = p + 1;
      }
    }
    if (p >= t.size()) continue;  // unbalanced: not a signature this can read
    if (start < p) k.params.push_back(make_param(source, t, start, p));
    if (k.params.size() == 1 && k.params[0].words == std::vector<std::string>{"void"} && k.params[0].name.empty())
      k.params.clear();
    k.params_end = t[p].begin;
    std::size_t q = p + 1;
    while (q < t.size() && t[q].kind == Token::Kind::identifier && is_attribute_word(word(q)) && punct(q + 1, '('))
      q = skip_group(paren_close, q + 1);
    if (punct(q, '{')) k.body = t[q].end;
    out.push_back(std::move(k));
    i = p;
  }
  return out;
}

ParamType describe_type(const std::string& type_name, unsigned address_bits) {
  ParamType r;
  std::vector<std::string> words;
  std::string cur;
  for (char c : type_name) {
    if (ident_char(c)) {
      cur += c;
      continue;
    }
    if (!cur.empty()) words.push_back(cur);
    cur.clear();
    if (c == '*' || c == '[') {
      if (r.pointer) return ParamType{};  // pointer to pointer: not a buffer gpurt can pass
      r.pointer = true;
    }
  }
  if (!cur.empty()) words.push_back(cur);
  std::vector<std::string> w;
  for (auto& x : words)
    if (!is_qualifier(x)) w.push_back(x);
  using detail::ValueKind;
  const std::uint8_t ptr_bytes = static_cast<std::uint8_t>(address_bits / 8);
  auto set = [&](ValueKind k, bool is_signed, unsigned bytes, bool plain_char = false) {
    r.known = true;
    r.value = detail::ValueType{k, is_signed, plain_char, static_cast<std::uint8_t>(bytes)};
    return r;
  };
  if (w.empty()) return r.pointer ? ParamType{} : r;
  if (w.size() == 1) {
    const std::string& x = w[0];
    struct Named { const char* name; ValueKind kind; bool is_signed; unsigned bytes; };
    static const Named table[] = {
        {"char", ValueKind::integer, true, 1},      {"uchar", ValueKind::integer, false, 1},
        {"short", ValueKind::integer, true, 2},     {"ushort", ValueKind::integer, false, 2},
        {"int", ValueKind::integer, true, 4},       {"uint", ValueKind::integer, false, 4},
        {"long", ValueKind::integer, true, 8},      {"ulong", ValueKind::integer, false, 8},
        {"int8_t", ValueKind::integer, true, 1},    {"uint8_t", ValueKind::integer, false, 1},
        {"int16_t", ValueKind::integer, true, 2},   {"uint16_t", ValueKind::integer, false, 2},
        {"int32_t", ValueKind::integer, true, 4},   {"uint32_t", ValueKind::integer, false, 4},
        {"int64_t", ValueKind::integer, true, 8},   {"uint64_t", ValueKind::integer, false, 8},
        {"unsigned", ValueKind::integer, false, 4}, {"signed", ValueKind::integer, true, 4},
        {"float", ValueKind::floating, true, 4},    {"double", ValueKind::floating, true, 8},
        {"half", ValueKind::floating, true, 2},     {"__half", ValueKind::floating, true, 2},
        {"bfloat16", ValueKind::floating, true, 2}, {"__nv_bfloat16", ValueKind::floating, true, 2},
        {"nv_bfloat16", ValueKind::floating, true, 2},
        {"bool", ValueKind::boolean, false, 1},     {"_Bool", ValueKind::boolean, false, 1},
        {"cl_int", ValueKind::integer, true, 4},    {"cl_uint", ValueKind::integer, false, 4},
        {"cl_float", ValueKind::floating, true, 4},
    };
    if (x == "void") {
      if (!r.pointer) return ParamType{};
      r.known = true;
      r.void_pointee = true;
      return r;
    }
    if (x == "size_t" || x == "uintptr_t") return set(ValueKind::integer, false, ptr_bytes);
    if (x == "ptrdiff_t" || x == "intptr_t" || x == "ssize_t") return set(ValueKind::integer, true, ptr_bytes);
    for (const Named& n : table)
      if (x == n.name) {
        set(n.kind, n.is_signed, n.bytes, x == "char");
        r.value.is_bfloat16 = x == "bfloat16" || x == "__nv_bfloat16" || x == "nv_bfloat16";
        return r;
      }
    // A vector type of OpenCL (float4, uchar16) or CUDA (float4, int2): sizes are compared.
    // The six with host twins (gpurt::float4, types.hpp) are described lane by lane.
    static const Named vectors[] = {
        {"float2", ValueKind::floating, true, 2}, {"float4", ValueKind::floating, true, 4},
        {"int2", ValueKind::integer, true, 2},    {"int4", ValueKind::integer, true, 4},
        {"uint2", ValueKind::integer, false, 2},  {"uint4", ValueKind::integer, false, 4},
    };
    for (const Named& n : vectors)
      if (x == n.name) {
        set(n.kind, n.is_signed, 4 * n.bytes);
        r.value.lanes = static_cast<std::uint8_t>(n.bytes);
        return r;
      }
    std::size_t digits = x.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(x[digits - 1]))) --digits;
    if (digits < x.size() && digits > 0 && x.size() - digits <= 2) {
      const ParamType base = describe_type(x.substr(0, digits), address_bits);
      const unsigned lanes = static_cast<unsigned>(std::stoul(x.substr(digits)));
      if (base.known && !base.pointer && (lanes == 2 || lanes == 3 || lanes == 4 || lanes == 8 || lanes == 16)) {
        // OpenCL's 3-lane vectors take the room of 4.
        return set(ValueKind::other, false, base.value.bytes * (lanes == 3 ? 4u : lanes));
      }
    }
    r.known = true;  // a struct or typedef gpurt cannot see into: only its size is compared
    r.value = detail::ValueType{ValueKind::other, false, false, 0};
    return r;
  }
  // Multi-word spellings: "unsigned int", "long long", "unsigned char", "signed char", ...
  bool is_unsigned = false, is_signed_word = false;
  unsigned longs = 0;
  std::string base;
  for (const auto& x : w) {
    if (x == "unsigned") is_unsigned = true;
    else if (x == "signed") is_signed_word = true;
    else if (x == "long") ++longs;
    else if (base.empty()) base = x;
    else return ParamType{};
  }
  if (base == "double" && longs == 1) return ParamType{};  // long double: not on devices
  if (base.empty() || base == "int") {
    if (longs >= 1) return set(ValueKind::integer, !is_unsigned, 8);
    return set(ValueKind::integer, !is_unsigned, 4);
  }
  if (base == "char") return set(ValueKind::integer, !is_unsigned, 1, !is_unsigned && !is_signed_word);
  if (base == "short") return set(ValueKind::integer, !is_unsigned, 2);
  return ParamType{};
}

std::string describe_value(const detail::ValueType& v) {
  using detail::ValueKind;
  const std::string bits = std::to_string(8u * v.bytes);
  if (v.lanes != 0 && (v.kind == ValueKind::integer || v.kind == ValueKind::floating))
    return std::string("gpurt::") + (v.kind == ValueKind::floating ? "float" : v.is_signed ? "int" : "uint") +
           std::to_string(v.lanes);
  switch (v.kind) {
    case ValueKind::integer:
      if (v.plain_char) return "char";
      return std::string(v.is_signed ? "std::int" : "std::uint") + bits + "_t";
    case ValueKind::floating:
      if (v.bytes == 2) return v.is_bfloat16 ? "gpurt::bfloat16" : "gpurt::half";
      return v.bytes == 4 ? "float" : v.bytes == 8 ? "double" : bits + "-bit float";
    case ValueKind::boolean:
      return "bool";
    case ValueKind::other:
      return v.bytes ? "a " + std::to_string(v.bytes) + "-byte struct or vector" : "a struct";
    case ValueKind::unknown:
      break;
  }
  return "a value of unknown type";
}

}  // namespace gpurt::plugin
