# `cmake --install`: headers, libgpurt, the kernel library libgpurt-lib, the backend plugins beside
# them (where the loader looks without any environment variable), the gpurt tool, the conformance
# suite that `gpurt conformance` runs (under libexec/gpurt, when the tests were built),
# gpurtConfig.cmake (+ version) exporting gpurt::gpurt, gpurt::lib (also as the component `lib`),
# gpurt::opencl_interop and gpurt::cuda_interop (where those backends were built; components too) and
# the backend SDK gpurt::plugin_sdk (the plugin headers, installed with the others, the static
# support library every plugin links, GpurtPlugin.cmake and gpurt_plugin.map), the guide
# docs/writing-a-backend.md under share/doc/gpurt, and gpurt.pc and gpurt-lib.pc for pkg-config. Every installed path is
# relative to the prefix, so a prefix works wherever it is installed or moved to.
include(CMakePackageConfigHelpers)

foreach(dir LIBDIR INCLUDEDIR BINDIR LIBEXECDIR DOCDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    message(FATAL_ERROR "gpurt: CMAKE_INSTALL_${dir} is the absolute path '${CMAKE_INSTALL_${dir}}'; gpurt's "
                        "installed files find each other by relative paths, so give it relative to the prefix")
  endif()
endforeach()

install(TARGETS gpurt gpurt_lib EXPORT gpurtTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/gpurt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The interop headers <gpurt/cuda.hpp> and <gpurt/opencl.hpp> (they include the vendor's header, so
# only applications that call CUDA or OpenCL themselves include them; docs/interop.md).
install(FILES ${PROJECT_SOURCE_DIR}/backends/cuda/include/gpurt/cuda.hpp
  ${PROJECT_SOURCE_DIR}/backends/opencl/include/gpurt/opencl.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/gpurt)
install(TARGETS gpurt_plugin_support gpurt_plugin_api EXPORT gpurtTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${PROJECT_SOURCE_DIR}/docs/writing-a-backend.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels/include/gpurt DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})  # library.hpp
add_custom_target(gpurt_plugins)  # every plugin that is built (and installed): scripts/run.sh builds it
foreach(plugin gpurt_opencl gpurt_cuda)
  if(TARGET ${plugin})
    install(TARGETS ${plugin} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
    add_dependencies(gpurt_plugins ${plugin})
  endif()
endforeach()
if(TARGET gpurt_tool)
  install(TARGETS gpurt_tool RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

# The conformance suite: in the build tree `gpurt conformance` finds it next to itself; installed,
# at this path relative to the tool. OPTIONAL: a tree built by scripts/run.sh (the tool, the
# plugins and one example) installs without it, and `gpurt conformance` then says how to get it.
set(gpurt_suite_dir ${CMAKE_INSTALL_LIBEXECDIR}/gpurt)
file(RELATIVE_PATH gpurt_bin_to_suite /p/${CMAKE_INSTALL_BINDIR} /p/${gpurt_suite_dir}/gpurt_conformance)
file(RELATIVE_PATH gpurt_suite_to_lib /p/${gpurt_suite_dir} /p/${CMAKE_INSTALL_LIBDIR})
if(TARGET gpurt_tool)
  target_compile_definitions(gpurt_tool PRIVATE GPURT_INSTALLED_SUITE="${gpurt_bin_to_suite}")
endif()
if(TARGET gpurt_conformance)
  set_target_properties(gpurt_conformance PROPERTIES INSTALL_RPATH "$ORIGIN/${gpurt_suite_to_lib}")
  install(TARGETS gpurt_conformance RUNTIME DESTINATION ${gpurt_suite_dir} OPTIONAL)
endif()

install(EXPORT gpurtTargets NAMESPACE gpurt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpurt)
# The interop targets (headers only: <gpurt/opencl.hpp>, <gpurt/cuda.hpp>), each in a file of its
# own that gpurtConfig.cmake includes only where the consumer finds the vendor's package (OpenCL,
# CUDAToolkit), so find_package(gpurt) works on a machine with neither.
if(TARGET gpurt_opencl_interop)
  install(TARGETS gpurt_opencl_interop EXPORT gpurtOpenCLInteropTargets)
  install(EXPORT gpurtOpenCLInteropTargets NAMESPACE gpurt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpurt)
endif()
if(TARGET gpurt_cuda_interop)
  install(TARGETS gpurt_cuda_interop EXPORT gpurtCudaInteropTargets)
  install(EXPORT gpurtCudaInteropTargets NAMESPACE gpurt:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpurt)
endif()
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/gpurtConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/gpurtConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpurt)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gpurtConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpurtConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gpurtConfigVersion.cmake
  ${PROJECT_SOURCE_DIR}/cmake/GpurtPlugin.cmake ${PROJECT_SOURCE_DIR}/cmake/gpurt_plugin.map
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/gpurt)

# gpurt.pc: prefix=${pcfiledir}/<this many ..>, so pkg-config answers for wherever it was installed.
file(RELATIVE_PATH GPURT_PC_TO_PREFIX /p/${CMAKE_INSTALL_LIBDIR}/pkgconfig /p)
configure_file(${PROJECT_SOURCE_DIR}/cmake/gpurt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gpurt.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/gpurt-lib.pc.in ${CMAKE_CURRENT_BINARY_DIR}/gpurt-lib.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gpurt.pc ${CMAKE_CURRENT_BINARY_DIR}/gpurt-lib.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
