# Turns the dashboard's static files into a C++ source, so matchmakerd serves
# them with no files beside it at run time.
#   cmake -DWEB_DIR=... -DOUTPUT=... -P EmbedFiles.cmake
file(GLOB files RELATIVE "${WEB_DIR}" "${WEB_DIR}/*.html" "${WEB_DIR}/*.js" "${WEB_DIR}/*.css")
list(SORT files)
set(body "")
foreach(name IN LISTS files)
  file(READ "${WEB_DIR}/${name}" text)
  string(FIND "${text}" ")mmweb\"" clash)
  if(NOT clash EQUAL -1)
    message(FATAL_ERROR "${name} contains the raw-string delimiter )mmweb\"")
  endif()
  if(name MATCHES "\\.html$")
    set(type "text/html; charset=utf-8")
  elseif(name MATCHES "\\.js$")
    set(type "text/javascript; charset=utf-8")
  else()
    set(type "text/css; charset=utf-8")
  endif()
  string(APPEND body "    {\"/${name}\", \"${type}\", R\"mmweb(${text})mmweb\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from apps/server/web by cmake/EmbedFiles.cmake. Do not edit.
#include \"dashboard_files.hpp\"

namespace mm::server {
const std::vector<embedded_file>& dashboard_files() {
  static const std::vector<embedded_file> all = {
${body}  };
  return all;
}
}  // namespace mm::server
")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
