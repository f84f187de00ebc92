# Turns schema/NNN_name.sql into a C++ source holding every migration, so the
# binaries carry their schema and need no files at run time.
#   cmake -DSCHEMA_DIR=... -DOUTPUT=... -P EmbedSchema.cmake
file(GLOB migrations RELATIVE "${SCHEMA_DIR}" "${SCHEMA_DIR}/[0-9][0-9][0-9]_*.sql")
list(SORT migrations)
set(body "")
set(expected 1)
foreach(name IN LISTS migrations)
  string(SUBSTRING "${name}" 0 3 number)
  math(EXPR version "${number}")
  if(NOT version EQUAL expected)
    message(FATAL_ERROR "schema/${name}: expected migration ${expected} next")
  endif()
  math(EXPR expected "${expected} + 1")
  file(READ "${SCHEMA_DIR}/${name}" sql)
  string(APPEND body "    {${version}, \"${name}\", R\"mmsql(${sql})mmsql\"},\n")
endforeach()
file(WRITE "${OUTPUT}.tmp" "// Generated from schema/*.sql by cmake/EmbedSchema.cmake. Do not edit.
#include \"migrations.hpp\"

namespace mm {
const std::vector<migration>& migrations() {
  static const std::vector<migration> all = {
${body}  };
  return all;
}
}  // namespace mm
")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUTPUT}.tmp" "${OUTPUT}")
