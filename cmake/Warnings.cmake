# Compiler warnings and sanitizers for the project's own targets.
function(mm_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                                           -Wnon-virtual-dtor -Wold-style-cast)
  if(MM_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

if(MM_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
                      -fno-sanitize-recover=undefined)
  add_link_options(-fsanitize=address,undefined)
endif()
