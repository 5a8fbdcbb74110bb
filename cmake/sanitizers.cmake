# HEIST_SANITIZER=thread|address instruments everything built in this tree (library, tests,
# benchmarks, examples), as sanitizers require. -g1: line tables only (the last -g option
# wins over RelWithDebInfo's -g), which is all a sanitizer's report needs for file:line in
# every frame; full debug information made the ASan build 25% slower (measured on a 2-vCPU
# VM, everything built with the tests' precompiled header: 429 s with -g, 343 s with -g1). Configure with -DHEIST_SANITIZER_DEBUG=-g to debug a report in gdb.
set(HEIST_SANITIZER_DEBUG "-g1" CACHE STRING "Debug information of the sanitizer builds")
if(HEIST_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread ${HEIST_SANITIZER_DEBUG} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  # GCC warns that TSan does not model atomic_thread_fence. heist never relies on a fence to
  # publish plain data (every hand-off is a release/acquire pair on an atomic); its fences
  # only order atomics among themselves (Chase-Lev T4/S2, the sleep protocol's Dekker pairs),
  # which TSan does not check anyway. The model check and stress tests cover them.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    add_compile_options(-Wno-tsan)
  endif()
elseif(HEIST_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined
                      ${HEIST_SANITIZER_DEBUG} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(HEIST_SANITIZER STREQUAL "fuzzer")
  # libFuzzer coverage everywhere, ASan+UBSan to turn bugs into crashes; the fuzz targets add
  # -fsanitize=fuzzer at link time (tests/fuzz). Needs clang.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                      ${HEIST_SANITIZER_DEBUG} -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT HEIST_SANITIZER STREQUAL "")
  message(FATAL_ERROR "HEIST_SANITIZER must be thread, address, fuzzer or empty, not '${HEIST_SANITIZER}'")
endif()
