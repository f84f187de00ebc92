# Compiler warnings and sanitizers for the project's own targets.
function(mm_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                           -Wnon-virtual-dtor -Wold-style-cast)
  if(MM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# Every finding stops the program (halt_on_error), except the one CAF header
# defect listed in ubsan.supp; null checks stay recoverable so that it can be
# suppressed at all.
set(MM_SANITIZER_ENV "")
if(MM_SANITIZE)
  # -Og with line tables only: the sanitizers find the same faults and report
  # them with file and line, the optimiser's warnings (maybe-uninitialized)
  # are still checked, and the build takes a quarter less time than at -O1
  # (the CAF-heavy test files dominate it) while the tests run as fast
  # (docs/performance.md, "Build time").
  if(CMAKE_BUILD_TYPE STREQUAL "RelWithDebInfo")
    set(MM_SANITIZE_OPT "-Og" CACHE STRING "Optimization of the sanitizer build")
    set(CMAKE_CXX_FLAGS_RELWITHDEBINFO "${MM_SANITIZE_OPT} -g1 -DNDEBUG")
  endif()
  if(MM_SANITIZE_UNDEFINED)
    add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                        -fno-sanitize-recover=all -fsanitize-recover=null)
    add_link_options(-fsanitize=address,undefined)
    set(MM_SANITIZER_ENV
        "UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=${CMAKE_CURRENT_LIST_DIR}/ubsan.supp")
  else()
    add_compile_options(-fsanitize=address -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address)
  endif()
endif()
