# libFuzzer builds (bench/fuzz.sh): with -DTASO_FUZZ=ON and clang, all project code is
# instrumented for coverage and built with AddressSanitizer and UndefinedBehaviorSanitizer
# (any report aborts), and tests/fuzz/ adds one program per fuzz target. Off by default.
option(TASO_FUZZ "Build the libFuzzer targets under tests/fuzz (needs clang)" OFF)
if(TASO_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "TASO_FUZZ needs clang (configure with -DCMAKE_CXX_COMPILER=clang++)")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()
