# Finds the C++ Actor Framework 0.17 as Debian ships it (libcaf-dev), which has no
# CMake package of its own. Defines CAF_FOUND, CAF_VERSION and the imported
# targets CAF::core, CAF::io and CAF::openssl (TLS for the network layer; it
# links OpenSSL itself).
find_path(CAF_INCLUDE_DIR NAMES caf/all.hpp)
find_library(CAF_CORE_LIBRARY NAMES caf_core)
find_library(CAF_IO_LIBRARY NAMES caf_io)
find_library(CAF_OPENSSL_LIBRARY NAMES caf_openssl)

if(CAF_INCLUDE_DIR AND EXISTS "${CAF_INCLUDE_DIR}/caf/config.hpp")
  file(STRINGS "${CAF_INCLUDE_DIR}/caf/config.hpp" _caf_version_line
       REGEX "^#define CAF_VERSION [0-9]+")
  string(REGEX REPLACE "^#define CAF_VERSION ([0-9]+).*" "\\1" _caf_v "${_caf_version_line}")
  math(EXPR _caf_major "${_caf_v} / 10000")
  math(EXPR _caf_minor "(${_caf_v} / 100) % 100")
  math(EXPR _caf_patch "${_caf_v} % 100")
  set(CAF_VERSION "${_caf_major}.${_caf_minor}.${_caf_patch}")
endif()

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(CAF
  REQUIRED_VARS CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY CAF_OPENSSL_LIBRARY
  VERSION_VAR CAF_VERSION)

if(CAF_FOUND)
  find_package(Threads REQUIRED)
  if(NOT TARGET CAF::core)
    add_library(CAF::core UNKNOWN IMPORTED)
    set_target_properties(CAF::core PROPERTIES
      IMPORTED_LOCATION "${CAF_CORE_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${CAF_INCLUDE_DIR}"
      INTERFACE_LINK_LIBRARIES Threads::Threads)
  endif()
  # A library of CAF's that links the one before it.
  foreach(_caf_pair "io;CAF_IO_LIBRARY;CAF::core" "openssl;CAF_OPENSSL_LIBRARY;CAF::io")
    list(GET _caf_pair 0 _caf_name)
    list(GET _caf_pair 1 _caf_library)
    list(GET _caf_pair 2 _caf_links)
    if(NOT TARGET CAF::${_caf_name})
      add_library(CAF::${_caf_name} UNKNOWN IMPORTED)
      set_target_properties(CAF::${_caf_name} PROPERTIES
        IMPORTED_LOCATION "${${_caf_library}}"
        INTERFACE_LINK_LIBRARIES ${_caf_links})
    endif()
  endforeach()
endif()
mark_as_advanced(CAF_INCLUDE_DIR CAF_CORE_LIBRARY CAF_IO_LIBRARY CAF_OPENSSL_LIBRARY)
