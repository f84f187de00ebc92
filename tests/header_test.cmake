# Installs the build into a scratch prefix, then compiles every installed
# header on its own (one translation unit each, nothing but the package's
# targets and that prefix on the include path): a header that includes one
# that is not installed, or that needs an include it does not make itself,
# fails here before a game meets it.
#   cmake -DBUILD_DIR=... -DWORK_DIR=... [-DCXX_FLAGS=...] -P header_test.cmake
include("${CMAKE_CURRENT_LIST_DIR}/install_build.cmake")
file(GLOB_RECURSE headers RELATIVE "${WORK_DIR}/prefix/include" "${WORK_DIR}/prefix/include/mm/*.hpp")
list(LENGTH headers count)
if(count LESS 20)
  message(FATAL_ERROR "only ${count} headers were installed")
endif()
foreach(header IN LISTS headers)
  string(MAKE_C_IDENTIFIER "${header}" name)
  file(WRITE "${WORK_DIR}/project/tu/${name}.cpp" "#include \"${header}\"\n")
endforeach()
file(WRITE "${WORK_DIR}/project/CMakeLists.txt" [=[
cmake_minimum_required(VERSION 3.21)
project(mm_installed_headers LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
find_package(matchmaker REQUIRED)
file(GLOB sources "${CMAKE_CURRENT_SOURCE_DIR}/tu/*.cpp")
add_library(each_header OBJECT ${sources})
# Parsed and checked, not compiled to code: a third of the time.
target_compile_options(each_header PRIVATE -fsyntax-only -Wall -Wextra -Werror)
target_link_libraries(each_header PRIVATE matchmaker::mm_actors matchmaker::mm_store
                                          matchmaker::mm_session matchmaker::mm_engine
                                          matchmaker::mm_strategies)
]=])
execute_process(COMMAND ${CMAKE_COMMAND} -S "${WORK_DIR}/project" -B "${WORK_DIR}/build"
                        "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring the header project failed: ${rc}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build "${WORK_DIR}/build" -j2 -- -k
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "some of the ${count} installed headers do not compile on their own (above)")
endif()
message(STATUS "each of the ${count} installed headers compiles on its own")
