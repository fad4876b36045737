# Writes the SPIR-V binary INPUT as a comma-separated list of 32-bit words
# (little endian, as spirv-as writes them) to OUTPUT, for #include in an
# array initializer.
file(READ ${INPUT} hex HEX)
string(LENGTH "${hex}" length)
set(words "")
set(offset 0)
while(offset LESS length)
  string(SUBSTRING "${hex}" ${offset} 8 word)
  string(SUBSTRING "${word}" 0 2 b0)
  string(SUBSTRING "${word}" 2 2 b1)
  string(SUBSTRING "${word}" 4 2 b2)
  string(SUBSTRING "${word}" 6 2 b3)
  string(APPEND words "0x${b3}${b2}${b1}${b0}u,\n")
  math(EXPR offset "${offset} + 8")
endwhile()
file(WRITE ${OUTPUT} "${words}")
