# `cmake --install`: headers, libgpurt, the backend plugins beside it (where the loader looks
# without any environment variable), the gpurt tool, gpurtConfig.cmake (+ version) exporting
# gpurt::gpurt, and gpurt.pc for pkg-config.
include(CMakePackageConfigHelpers)

install(TARGETS gpurt EXPORT gpurtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/gpurt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(plugin gpurt_opencl gpurt_cuda)
  if(TARGET ${plugin})
    install(TARGETS ${plugin} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  endif()
endforeach()
if(TARGET gpurt_tool)
  install(TARGETS gpurt_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(EXPORT gpurtTargets NAMESPACE gpurt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpurt)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpurtConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/gpurtConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpurt)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gpurtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpurtConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gpurtConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpurt)

configure_file(${PROJECT_SOURCE_DIR}/cmake/gpurt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gpurt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpurt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
