// What Device::build hands the compiler (core/src/services/build_text.cpp): the include scan behind the
// compile cache's "a program that may read other files is not cached" (gpurt/cache.hpp), the
// #line-safe program name and the define lines (gpurt/device.hpp). The device-side effects are in
// tests/programs/contract_cache.cpp; here are the spellings no compiler needs to accept.
#include <string>

#include "services/build_text.hpp"
#include "harness.hpp"

using gpurt::detail::define_lines;
using gpurt::detail::line_directive_name;
using gpurt::detail::option_reads_files;
using gpurt::detail::reads_other_files;

TEST_CASE("cache.hpp: every spelling of a file-reading directive is found") {
  // "its source has an #include, #include_next, #import or #embed directive (found as the
  // preprocessor finds them ...; such a line inside a /* */ comment counts too) or a __has_include /
  // __has_embed test"
  const char* reading[] = {
      "#include \"h.h\"",         "x;\n# include <h.h>",          "x;\r#include \"h.h\"",
      "x;\r\n#  include \"h.h\"", "#/**/include \"h.h\"",         "/* a\n b */ #include \"h.h\"",
      "#\\\ninclude \"h.h\"",     "#inc\\\nlude \"h.h\"",         "#inc\\  \nlude \"h.h\"",
      "#inc?\?/\nlude \"h.h\"",   "%:include \"h.h\"",            "?\?=include \"h.h\"",
      "#include_next <h.h>",      "#import \"h.h\"",              "#embed \"data.bin\"",
      "\xEF\xBB\xBF#include \"h.h\"", "#if __has_include(\"h.h\")\n#endif", "#if __has_embed(\"d\")\n#endif",
      "#if __has_in\\\nclude(\"h.h\")\n#endif", "/* an include line\n#include \"h.h\"\n in a comment counts */",
      "\t\v\f#include \"h.h\"",
  };
  for (const char* text : reading) {
    INFO(text);
    CHECK(reads_other_files(text));
  }
  const char* not_reading[] = {"int x;", "int a; # include", "#define INCLUDE 1", "#includes", "#pragma include",
                               "x = 1; /* */ y; #include", "#define X(a) #a include", "int included;",
                               "// #include after a line comment is no directive"};
  for (const char* text : not_reading) {
    INFO(text);
    CHECK_FALSE(reads_other_files(text));
  }
  CHECK(option_reads_files("-include"));
  CHECK(option_reads_files("--pre-include=h.h"));
  CHECK(option_reads_files("-imacros"));
  CHECK(option_reads_files("@options.txt"));
  CHECK(option_reads_files("-I/usr/include/x"));  // errs towards true: only caching is lost
  CHECK_FALSE(option_reads_files("-cl-fast-relaxed-math"));
}

TEST_CASE("the include scan is linear on text built to make it quadratic") {
  // STYLE.md: "Does any scan of user text recurse?" - and none may rescan: 200k comment ends in a
  // row, and 200k lines that each open a comment, finish (a quadratic scan would take hours).
  std::string ends, opens;
  for (int i = 0; i < 200000; ++i) {
    ends += "/**/";
    opens += "\n/*";
  }
  CHECK_FALSE(reads_other_files(ends + "x #include"));
  CHECK(reads_other_files(ends + "#include \"h.h\""));
  CHECK(reads_other_files(opens + "*/ #include \"h.h\""));
}

TEST_CASE("device.hpp: a name in #line can never end its string or line") {
  // "quotes, backslashes and question marks are escaped and control characters (line breaks)
  // become '_' ... each byte that is not part of valid UTF-8 reaches the compiler as the four
  // characters \xHH" (NVRTC refused "prog \xFF\x80" in #line: "expected a file name")
  CHECK(line_directive_name("plain.gpurt") == "plain.gpurt");
  CHECK(line_directive_name("a\"b\\c?\?=d") == "a\\\"b\\\\c\\?\\?=d");
  CHECK(line_directive_name(std::string("n\nr\rt\tz\0e\x7f", 10)) == "n_r_t_z_e_");
  CHECK(line_directive_name("caf\xC3\xA9") == "caf\xC3\xA9");  // UTF-8 kept
  // The directive's text holds an escaped backslash, so the compiler reads the file name \xFF\x80.
  CHECK(line_directive_name("prog \xFF\x80") == "prog \\\\xFF\\\\x80");
  CHECK(line_directive_name("cut \xE6\x97") == "cut \\\\xE6\\\\x97");
}

TEST_CASE("device.hpp: defines become #define lines, then a #line back to the source's first line") {
  // "given to the compiler as "#define NAME VALUE" lines ahead of the source ... an empty value
  // defines NAME as 1, as -DNAME does."
  CHECK(define_lines({}, "p", "Device::build", nullptr).empty());
  CHECK(define_lines({{"A", "1 -DB"}, {"C", ""}}, "p\\\"q", "Device::build", nullptr) ==
        "#define A 1 -DB\n#define C 1\n#line 1 \"p\\\"q\"\n");
  GPURT_REQUIRE_ERROR(define_lines({{"A-B", "1"}}, "p", "Device::build", nullptr),
                      gpurt::ErrorCategory::invalid_argument, "Device::build");
  GPURT_REQUIRE_ERROR(define_lines({{"A", "/* */ /*"}}, "p", "Device::build", nullptr),
                      gpurt::ErrorCategory::invalid_argument, "does not close");
}
