# gpurt_discover_tests(TARGET [PER_DEVICE] [LABEL label])
#
# Registers every Catch2 test case of TARGET as its own CTest entry, discovered when ctest runs
# (so the devices are those of the machine running the tests). With PER_DEVICE, each case is
# registered once per device ("opencl:0 <name> | <case>", label = backend) with
# GPURT_TEST_DEVICE set, and once per unavailable backend ("cuda unavailable | <case>"), which the
# harness reports as skipped with the reason. With DEVICE sel, each case runs once on that selector
# (skipped with the reason when its backend is unavailable). ENV adds NAME=VALUE entries to each
# test's environment. scripts/run-tests-batched.py runs the cases of one program and device in one
# process; ONE_PROCESS_PER_CASE keeps a program whose cases change what the process shares (the
# mock backend's injected failures) out of that, so that each case runs in a process of its own
# there too. Works with Catch2 2.x and 3.x.
function(gpurt_discover_tests target)
  cmake_parse_arguments(ARG "PER_DEVICE;ONE_PROCESS_PER_CASE" "LABEL;DEVICE" "ENV" ${ARGN})
  # run_args: a test name that matches no case must fail, not pass with nothing run (Catch2 3
  # fails such a run by itself; Catch2 2 needs --warn NoTests).
  if(GPURT_CATCH2_MAJOR GREATER_EQUAL 3)
    set(list_args "--list-tests;--verbosity;quiet")
    set(run_args "")
  else()
    set(list_args "--list-test-names-only")
    set(run_args "--warn;NoTests")
  endif()
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${target}_include.cmake")
  set(batchable 1)
  if(ARG_ONE_PROCESS_PER_CASE)
    set(batchable 0)
  endif()
  set(per_device 0)
  if(ARG_PER_DEVICE)
    set(per_device 1)
  endif()
  file(GENERATE OUTPUT "${script}" CONTENT
"set(GPURT_EXE \"$<TARGET_FILE:${target}>\")
set(GPURT_LIST_ARGS \"${list_args}\")
set(GPURT_RUN_ARGS \"${run_args}\")
set(GPURT_PER_DEVICE ${per_device})
set(GPURT_LABEL \"${ARG_LABEL}\")
set(GPURT_DEVICE_SELECTOR \"${ARG_DEVICE}\")
set(GPURT_EXTRA_ENV \"${ARG_ENV}\")
set(GPURT_CMAKE \"${CMAKE_COMMAND}\")
set(GPURT_TARGET \"${target}\")
set(GPURT_BATCHABLE ${batchable})
include(\"${PROJECT_SOURCE_DIR}/cmake/GpurtAddTests.cmake\")
")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()
