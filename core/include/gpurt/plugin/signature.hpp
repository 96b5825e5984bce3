// Reading kernel signatures from C-family source (the portable dialect, OpenCL C, CUDA C++), for
// the core's argument checks and for backends that rewrite or introspect kernels. Part of the
// plugin SDK: the static library gpurt_plugin_support, linked into libgpurt and each plugin.
//
// The scan is one linear pass over the text (no regular expressions, no recursion): it skips
// comments, string and character literals and preprocessor lines, and finds each function that a
// kernel keyword introduces (`GPURT_KERNEL`, `__kernel`, `__global__`, ...). What it cannot read
// (macros that hide a signature, templates with commas) it leaves out rather than guesses.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "gpurt/types.hpp"

namespace gpurt::plugin {

constexpr std::size_t no_position = static_cast<std::size_t>(-1);

struct ParamDecl {
  std::vector<std::string> words;  // identifiers, "*" and "[" as written, the name excluded
  std::string name;                // the parameter's name; empty when unnamed
  std::size_t begin = 0;           // [begin, end): the declaration in the source
  std::size_t end = 0;
  std::size_t name_end = no_position;  // just past the name in the source
  bool macro_call = false;         // written as MACRO(...) (GPURT_DYNAMIC_LOCAL(T, name))
  // The type as written, qualifiers and address spaces dropped: "float*", "unsigned int".
  std::string type_name() const;
  bool has_word(const char* w) const;
};

struct KernelDecl {
  std::string name;
  std::vector<ParamDecl> params;
  std::size_t params_end = 0;       // the closing ')' of the parameter list
  std::size_t body = no_position;   // just past the '{' of a definition; no_position otherwise
};

// Every kernel declaration or definition in `source` introduced by one of `keywords`.
std::vector<KernelDecl> scan_kernels(const std::string& source,
                                     std::initializer_list<const char*> keywords);

// What a parameter type spelled `type_name` ("uint32_t", "float*", "unsigned long", "size_t",
// "float4*") holds. `pointer` is set for pointers (and arrays); `value` describes the pointee then.
// `address_bits` sizes size_t and friends. Unknown spellings give ValueKind::unknown.
struct ParamType {
  bool known = false;   // false: nothing could be read from the spelling
  bool pointer = false;
  bool void_pointee = false;
  detail::ValueType value;
};
ParamType describe_type(const std::string& type_name, unsigned address_bits = 64);

// A person's name for a value type: "std::uint32_t", "float", "a 12-byte struct".
std::string describe_value(const detail::ValueType& v);

}  // namespace gpurt::plugin
