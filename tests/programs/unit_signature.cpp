// The plugin SDK's kernel-signature scanner and type reader (gpurt/plugin/signature.hpp).
#include <cstdint>

#include "gpurt/plugin/signature.hpp"
#include "harness.hpp"

using namespace gpurt::plugin;
using gpurt::detail::ValueKind;

TEST_CASE("signature: kernels, parameters and names are read across comments, strings and macros") {
  // signature.hpp: "skips comments, string and character literals and preprocessor lines, and finds
  // each function that a kernel keyword introduces".
  const std::string src =
      "#define GPURT_KERNEL_FAKE GPURT_KERNEL void hidden(int x)\n"
      "/* GPURT_KERNEL void in_comment(int a) */\n"
      "const char* s = \"GPURT_KERNEL void in_string(int a)\";\n"
      "GPURT_KERNEL void __attribute__((reqd_work_group_size(64, 1, 1)))\n"
      "  first(GPURT_GLOBAL const float* GPURT_RESTRICT x, // trailing\n"
      "        unsigned long long n, GPURT_DYNAMIC_LOCAL(float, tile)) { }\n"
      "GPURT_KERNEL void noargs(void);\n";
  const auto k = scan_kernels(src, {"GPURT_KERNEL"});
  REQUIRE(k.size() == 2);
  CHECK(k[0].name == "first");
  REQUIRE(k[0].params.size() == 3);
  CHECK(k[0].params[0].name == "x");
  CHECK(k[0].params[0].type_name() == "float*");
  CHECK(k[0].params[1].name == "n");
  CHECK(k[0].params[1].type_name() == "unsigned long long");
  CHECK(k[0].params[2].macro_call);
  CHECK(k[0].params[2].name == "tile");
  CHECK(k[0].body != no_position);
  CHECK(src.substr(k[0].params[0].name_end - 1, 1) == "x");
  CHECK(k[1].name == "noargs");
  CHECK(k[1].params.empty());
  CHECK(k[1].body == no_position);
}

TEST_CASE("signature: CUDA kernels with extern \"C\" and launch bounds") {
  const auto k = scan_kernels("extern \"C\" __global__ void __launch_bounds__(256) saxpy(float a, const float* __restrict__ x, "
                              "float* y, int n) {}", {"__global__"});
  REQUIRE(k.size() == 1);
  CHECK(k[0].name == "saxpy");
  REQUIRE(k[0].params.size() == 4);
  CHECK(k[0].params[1].type_name() == "float*");
  CHECK(k[0].params[3].type_name() == "int");
}

TEST_CASE("signature: hostile text is scanned in linear time without recursion") {
  // ~30,000 consecutive spaces made std::regex recurse until the stack overflowed.
  std::string s = "GPURT_KERNEL" + std::string(1 << 20, ' ') + "void k(" + std::string(1 << 18, '(') + "\n";
  s += std::string(1 << 18, '/') + "\"unterminated";
  CHECK_NOTHROW(scan_kernels(s, {"GPURT_KERNEL"}));
  CHECK(scan_kernels(s, {"GPURT_KERNEL"}).empty());
  CHECK_NOTHROW(scan_kernels(std::string(1 << 20, '#'), {"GPURT_KERNEL"}));
  // Many unclosed kernel heads (and attributes) each used to walk to the end of the text: 40,000
  // took 9 s. Linear, 200,000 take well under a second (quadratic, minutes: the test's timeout).
  std::string heads;
  for (int i = 0; i < 200000; ++i) heads += "GPURT_KERNEL __attribute__((x) void h(GPURT_GLOBAL float* x,\n";
  const auto found = scan_kernels(heads + "GPURT_KERNEL void last(int a) {}", {"GPURT_KERNEL"});
  REQUIRE(found.size() == 1);  // the one balanced head
  CHECK(found[0].name == "last");
}

TEST_CASE("signature: type spellings say kind, signedness and width") {
  struct Case { const char* spelled; ValueKind kind; bool is_signed; unsigned bytes; bool pointer; };
  const Case cases[] = {
      {"uint32_t", ValueKind::integer, false, 4, false}, {"int32_t", ValueKind::integer, true, 4, false},
      {"uint", ValueKind::integer, false, 4, false},     {"unsigned int", ValueKind::integer, false, 4, false},
      {"size_t", ValueKind::integer, false, 8, false},   {"long", ValueKind::integer, true, 8, false},
      {"unsigned long long", ValueKind::integer, false, 8, false}, {"char", ValueKind::integer, true, 1, false},
      {"float", ValueKind::floating, true, 4, false},    {"double", ValueKind::floating, true, 8, false},
      {"half", ValueKind::floating, true, 2, false},     {"float*", ValueKind::floating, true, 4, true},
      {"uint32_t*", ValueKind::integer, false, 4, true}, {"float4", ValueKind::floating, true, 16, false},
      {"uchar3", ValueKind::other, false, 4, false},     {"bool", ValueKind::boolean, false, 1, false},
  };
  for (const Case& c : cases) {
    INFO(c.spelled);
    const ParamType t = describe_type(c.spelled);
    CHECK(t.known);
    CHECK(t.pointer == c.pointer);
    CHECK(t.value.kind == c.kind);
    if (c.kind == ValueKind::integer) CHECK(t.value.is_signed == c.is_signed);
    CHECK(t.value.bytes == c.bytes);
  }
  CHECK(describe_type("size_t", 32).value.bytes == 4);
  CHECK(describe_type("void*").void_pointee);
  CHECK_FALSE(describe_type("float**").known);
  CHECK_FALSE(describe_type("long double").known);
  CHECK(describe_type("float99999999999999999999").value.kind == ValueKind::other);
  CHECK(describe_value(describe_type("uint32_t").value) == "std::uint32_t");
  // The six vector types with host twins (gpurt::float4 ...) are read lane by lane and named by
  // their twin; other vector spellings keep their size only.
  CHECK(describe_type("float4").value.lanes == 4);
  CHECK(describe_type("uint2*").value.lanes == 2);
  CHECK(describe_type("uint2*").value.bytes == 8);
  CHECK(describe_value(describe_type("int4").value) == "gpurt::int4");
  CHECK(describe_value(describe_type("float2").value) == "gpurt::float2");
  CHECK(describe_type("uchar4").value.lanes == 0);
  CHECK(gpurt::detail::value_type_of<gpurt::uint4>().lanes == 4);
  CHECK(gpurt::detail::value_type_of<gpurt::uint4>().bytes == 16);
  CHECK_FALSE(gpurt::detail::value_type_of<gpurt::float4>().lanes == gpurt::detail::value_type_of<float>().lanes);
}
