# Writes INPUT as a C byte array (tile_stdlib_source) to OUTPUT.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR size "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x[0-9a-f][0-9a-f],){16}" "\\0\n  " bytes "${bytes}")
file(WRITE ${OUTPUT} "/* generated from lang/stdlib.tl; do not edit */\n#include <stddef.h>\n"
  "const unsigned char tile_stdlib_source[] = {\n  ${bytes}0};\nconst size_t tile_stdlib_size = ${size};\n")
