# Embed a text file as a NUL-terminated C array: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P
# assets.cmake. Hex bytes, so no escaping rule of C string literals can bite.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" hex "${hex}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by reports/assets.cmake; do not edit */\nconst char ${NAME}[] = {\n${hex}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
