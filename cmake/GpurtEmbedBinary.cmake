# cmake -DINPUT=file -DOUTPUT=file.cpp -DSYMBOL=name -P GpurtEmbedBinary.cmake
# Writes a C++ source defining `const unsigned char SYMBOL[]` and `SYMBOL_size` with INPUT's bytes.
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" len)
math(EXPR size "${len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x[0-9a-f][0-9a-f],){32})" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT}; do not edit.\n#include <cstddef>\nnamespace gpurt::lib::embedded {\nextern const unsigned char ${SYMBOL}[] = {\n${bytes}\n};\nextern const std::size_t ${SYMBOL}_size = ${size};\n}  // namespace gpurt::lib::embedded\n")
