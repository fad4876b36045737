# Writes the text file INPUT to OUTPUT as a C++ raw string literal, for
# #include in an initializer (the PTX kernels of the CUDA path).
file(READ ${INPUT} text)
file(WRITE ${OUTPUT} "R\"cachet_ptx(${text})cachet_ptx\"\n")
