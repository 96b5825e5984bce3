# gpurt_warnings(target): the warning set every gpurt target compiles with; with
# GPURT_WARNINGS_AS_ERRORS (CI: WERROR=1 scripts/test.sh) each warning is an error.
option(GPURT_WARNINGS_AS_ERRORS "Treat warnings in gpurt's own targets as errors" OFF)
function(gpurt_warnings target)
  if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor)
    if(GPURT_WARNINGS_AS_ERRORS)
      target_compile_options(${target} PRIVATE -Werror)
    endif()
  endif()
endfunction()
