# TASO_SANITIZE=ON builds everything with AddressSanitizer and UndefinedBehaviorSanitizer
# (scripts/test.sh builds build-asan/ so and runs the tests there). Any report aborts the
# program (-fno-sanitize-recover=all), so a test that triggers one fails.
#
# -O1 -g keeps the stack traces readable and the build short; the per-target -O3 that
# CMakeLists.txt sets is lowered to -O1 once every target is defined. jemalloc is not
# linked (ASan must own malloc; see CMakeLists.txt), and CUDA should be disabled by the
# caller (-DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON): the CUDA runtime does not run
# under ASan's shadow memory.
option(TASO_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)

if(TASO_SANITIZE)
  set(TASO_SANITIZE_FLAGS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  # One generator expression per flag: a list inside one would be split at its ';' where
  # a subdirectory inherits the options.
  foreach(flag IN LISTS TASO_SANITIZE_FLAGS ITEMS -O1 -g)
    add_compile_options($<$<COMPILE_LANGUAGE:CXX>:${flag}>)
  endforeach()
  add_link_options(${TASO_SANITIZE_FLAGS})

  function(taso_sanitize_lower_optimization)
    get_property(targets DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(options ${target} COMPILE_OPTIONS)
      if(options)
        list(TRANSFORM options REPLACE "^-O3$" "-O1")
        set_target_properties(${target} PROPERTIES COMPILE_OPTIONS "${options}")
      endif()
    endforeach()
  endfunction()
  cmake_language(DEFER DIRECTORY ${CMAKE_SOURCE_DIR} CALL taso_sanitize_lower_optimization)
endif()
