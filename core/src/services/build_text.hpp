// What Device::build hands the compiler, made so that no input can become another input: the
// program's name fit for a #line directive, the defines as #define lines ahead of the source, and
// whether a source reads other files (which the compile cache's key cannot cover).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpurt::detail {

struct DeviceState;

// `name` made safe between the quotes of `#line 1 "..."`: backslash, double quote and question
// mark (trigraphs) are escaped, control characters (line breaks included) become '_', and each byte
// that is not part of valid UTF-8 is written \\xHH, which the compiler reads as the four characters
// \xHH (NVRTC refuses a file name that is not UTF-8: "expected a file name"). The result can never
// end the string or the line, and every compiler takes it.
std::string line_directive_name(const std::string& name);

// The text that goes ahead of a source's own text: one `#define NAME VALUE` line per define (an
// empty value defines NAME as 1, as -DNAME does), then `#line 1 "line_name"` so that the compiler
// still counts the user's lines from 1. Empty when there are no defines. Throws invalid_argument
// (naming `call`) for a name that is not a C identifier, or a value with a line break or NUL, one
// ending in a backslash (it would continue the line) or one opening a /* comment it does not close.
std::string define_lines(const std::vector<std::pair<std::string, std::string>>& defines,
                         const std::string& line_name, const char* call, const DeviceState* device);

// What a define list looks like as compiler options, for messages: "-DA=1 -DB".
std::string defines_as_options(const std::vector<std::pair<std::string, std::string>>& defines);

// True when `text` may read another file while it is preprocessed: an #include, #include_next,
// #import or #embed directive, found the way a preprocessor finds them (whitespace and comments
// around the '#', the digraph %: and the trigraph ??=, lines joined by backslash-newline, with
// or without trigraphs), or a __has_include / __has_embed test. It errs towards true: such
// a line inside a /* */ comment, or after a "*/" inside a string, also counts. Linear in the text's length.
bool reads_other_files(const std::string& text);

// True when a compiler option names a file to read (-include, --pre-include, -imacros, @file).
bool option_reads_files(const std::string& option);

}  // namespace gpurt::detail
