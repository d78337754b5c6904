# Install libpegplus (shared + static), headers, pegplus.pc and the CMake package.
include(CMakePackageConfigHelpers)

install(TARGETS pegplus pegplus_static EXPORT pegplus-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
if(TARGET pegplus-run)
  install(TARGETS pegplus-run LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(PROGRAMS ${PROJECT_BINARY_DIR}/pegplus-run.install DESTINATION ${CMAKE_INSTALL_BINDIR}
          RENAME pegplus-run)
endif()
install(DIRECTORY
  ${PROJECT_SOURCE_DIR}/contact/include/pegplus
  ${PROJECT_SOURCE_DIR}/impact/include/pegplus
  ${PROJECT_SOURCE_DIR}/plugin/include/pegplus
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT pegplus-targets NAMESPACE pegplus::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pegplus)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/pegplus-config.cmake.in
  ${PROJECT_BINARY_DIR}/pegplus-config.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pegplus)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/pegplus-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pegplus-config.cmake ${PROJECT_BINARY_DIR}/pegplus-config-version.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/pegplus)

file(RELATIVE_PATH PP_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
configure_file(${PROJECT_SOURCE_DIR}/cmake/pegplus.pc.in ${PROJECT_BINARY_DIR}/pegplus.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pegplus.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
