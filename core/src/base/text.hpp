// Text as gpurt writes it into files and compiler input: UTF-8 checked byte by byte, so names that
// are not valid UTF-8 (a program or span name is any bytes the application gave) never make a JSON
// file or a compiler directive invalid.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gpurt::detail {

// Length of the valid UTF-8 sequence (RFC 3629: shortest form, no surrogates, at most U+10FFFF)
// that starts at p[0], or 0 when p[0] does not start one. n is the number of bytes readable at p
// (at least 1).
std::size_t utf8_length(const unsigned char* p, std::size_t n);

// `text` with valid UTF-8 kept byte for byte and each byte that is not part of a valid sequence
// written as `backslash` followed by xHH (uppercase hex): with "\\" the four characters \xFF.
std::string escape_invalid_utf8(std::string_view text, std::string_view backslash);

}  // namespace gpurt::detail
