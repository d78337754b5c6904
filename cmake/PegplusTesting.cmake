# Check (libcheck) unit tests, registered in CTest with a label.
pkg_check_modules(CHECK REQUIRED IMPORTED_TARGET check)

# pp_add_check_test(NAME <name> SOURCES <c files> LIBS <targets> LABEL unit|integration [TIMEOUT s])
function(pp_add_check_test)
  cmake_parse_arguments(T "" "NAME;LABEL;TIMEOUT" "SOURCES;LIBS" ${ARGN})
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE ${T_LIBS} PkgConfig::CHECK)
  add_test(NAME ${T_NAME} COMMAND ${T_NAME})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS ${T_LABEL} TIMEOUT ${T_TIMEOUT})
endfunction()
