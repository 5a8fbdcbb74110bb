# HEIST_SANITIZER=thread|address instruments everything built in this tree (library, tests,
# benchmarks, examples), as sanitizers require.
if(HEIST_SANITIZER STREQUAL "thread")
  add_compile_options(-fsanitize=thread -g -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(HEIST_SANITIZER STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -g
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(NOT HEIST_SANITIZER STREQUAL "")
  message(FATAL_ERROR "HEIST_SANITIZER must be thread, address or empty, not '${HEIST_SANITIZER}'")
endif()
