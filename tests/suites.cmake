# The suites, built from the feature folders (tests/README.md maps features to folders). A feature's
# folder holds its cases of every kind, named by the program they go into:
#   conformance_*.cpp  gpurt_conformance: written once against the public API, run once per device;
#   contract_*.cpp     gpurt_contract: written from the documents, each case quoting the promise it
#                      tries to break (*_attack.cpp: the adversarial ones), run once per device;
#   unit_*.cpp         gpurt_unit_tests: the core's pure pieces, no device.

# The conformance suite.
add_executable(gpurt_conformance
  devices/conformance_device.cpp
  memory/conformance_memory.cpp
  memory/conformance_queue_alloc.cpp
  memory/conformance_shared.cpp
  transfers/conformance_transfer.cpp
  transfers/conformance_registered.cpp
  launch/conformance_concurrency.cpp
  launch/conformance_launch.cpp
  programs/conformance_cache.cpp
  programs/conformance_dialect.cpp
  programs/conformance_float_math.cpp
  programs/conformance_half.cpp
  programs/conformance_program.cpp
  programs/conformance_atomics.cpp
  programs/conformance_sub_groups.cpp
  programs/conformance_vector_types.cpp
  events/conformance_errors.cpp
  events/conformance_events.cpp
  events/conformance_host_work.cpp
  graphs/conformance_graph.cpp
  graphs/conformance_graph_updates.cpp
  graphs/conformance_graph_host.cpp
  interop/conformance_interop.cpp
  library/conformance_library.cpp
  library/conformance_matmul.cpp
  library/conformance_rows.cpp
  files/conformance_trace.cpp
  devices/conformance_multi_device.cpp
  memory/soak.cpp
)
find_package(nlohmann_json REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)  # programs/conformance_cache.cpp writes entries with valid checksums
target_link_libraries(gpurt_conformance PRIVATE gpurt_test_harness gpurt::lib nlohmann_json::nlohmann_json
                      OpenSSL::Crypto)
gpurt_warnings(gpurt_conformance)
gpurt_discover_tests(gpurt_conformance PER_DEVICE LABEL conformance)

# Several devices in one process, on a pair that is always there on a CI machine: PoCL (opencl:0)
# and the mock backend (mock:0, its own memory), so copies between backends are relayed. The
# conformance suite above runs the same cases per device against the next device, when there is one.
add_executable(gpurt_multi_device devices/conformance_multi_device.cpp)
target_link_libraries(gpurt_multi_device PRIVATE gpurt_test_harness)
gpurt_warnings(gpurt_multi_device)
gpurt_discover_tests(gpurt_multi_device DEVICE opencl:0 LABEL multi-device ENV GPURT_ENABLE_MOCK=1 GPURT_TEST_PEER=mock:0)

# The contract suite: a case's name starts with the document it comes from.
add_executable(gpurt_contract
  devices/contract_api.cpp
  devices/contract_readme.cpp
  memory/contract_memory.cpp
  memory/contract_memory_attack.cpp
  transfers/contract_transfer.cpp
  transfers/contract_transfer_attack.cpp
  launch/contract_launch.cpp
  launch/contract_launch_attack.cpp
  programs/contract_cache.cpp
  programs/contract_dialect_attack.cpp
  events/contract_queue_attack.cpp
  events/contract_waits.cpp
  graphs/contract_graph.cpp
  interop/contract_interop_attack.cpp
  library/contract_library.cpp
  library/contract_library_attack.cpp
  library/contract_matmul_attack.cpp
  library/contract_vendor.cpp
  files/contract_files.cpp
  files/contract_files_attack.cpp
  files/contract_first_use.cpp
)
target_link_libraries(gpurt_contract PRIVATE gpurt_test_harness gpurt::lib nlohmann_json::nlohmann_json)
gpurt_warnings(gpurt_contract)
gpurt_discover_tests(gpurt_contract PER_DEVICE LABEL contract)
# contract_interop.cpp: the typed OpenCL header where the OpenCL backend is built, and the mock's
# control functions (failure injection, reference counts) where the mock backend is.
target_sources(gpurt_contract PRIVATE interop/contract_interop.cpp)
if(TARGET gpurt::opencl_interop)
  target_link_libraries(gpurt_contract PRIVATE gpurt::opencl_interop)
  target_compile_definitions(gpurt_contract PRIVATE GPURT_CONTRACT_OPENCL)
endif()
# contract_interop_attack.cpp: <gpurt/cuda.hpp> (headers only: the CUDA cases run where a CUDA device
# is present; the backend checks of its accessors run on every other device).
if(TARGET gpurt::cuda_interop)
  target_link_libraries(gpurt_contract PRIVATE gpurt::cuda_interop)
  target_compile_definitions(gpurt_contract PRIVATE GPURT_CONTRACT_CUDA)
endif()
if(TARGET gpurt_mock)
  target_include_directories(gpurt_contract PRIVATE ${PROJECT_SOURCE_DIR}/backends/mock)
  target_compile_definitions(gpurt_contract PRIVATE GPURT_MOCK_PLUGIN="$<TARGET_FILE:gpurt_mock>")
  target_link_libraries(gpurt_contract PRIVATE ${CMAKE_DL_LIBS})
endif()
# README (environment): "GPURT_TEST_SEED ... test harness only: ... random seed to replay". A value
# that is not a number replayed seed 0 and said nothing; it now stops the run (exit 2) naming it.
add_test(NAME "harness: a malformed GPURT_TEST_SEED stops the run naming it"
  COMMAND sh -c "out=$(GPURT_TEST_SEED=12x \"$0\" 2>&1); rc=$?; \
[ $rc -eq 2 ] && printf '%s' \"$out\" | grep -qF \"GPURT_TEST_SEED='12x' is malformed\" || { echo \"exit $rc: $out\"; exit 1; }"
    $<TARGET_FILE:gpurt_contract>)
set_tests_properties("harness: a malformed GPURT_TEST_SEED stops the run naming it" PROPERTIES LABELS contract TIMEOUT 60)

# Unit tests of the core; no device needed. (Each backend's own pure pieces: tests/backends/.)
add_executable(gpurt_unit_tests
  devices/unit_selector.cpp
  transfers/unit_copy_pool.cpp
  transfers/unit_host_ranges.cpp
  transfers/unit_transfer_record.cpp
  launch/unit_launch_config.cpp
  programs/unit_build_text.cpp
  programs/unit_float16.cpp
  programs/unit_signature.cpp
  events/unit_errors.cpp
  plugins/unit_discovery.cpp
  plugins/unit_loader.cpp
  plugins/unit_plugin_attack.cpp
  plugins/unit_startup.cpp
  files/unit_env.cpp
)
target_link_libraries(gpurt_unit_tests PRIVATE gpurt_test_harness gpurt_internal gpurt_plugin_support)
gpurt_warnings(gpurt_unit_tests)
add_subdirectory(plugins)  # the fake and attack plugins the loader's unit tests load
gpurt_discover_tests(gpurt_unit_tests LABEL unit)

# docs/architecture.md: "The plugin interface has no benchmark functions, and neither libgpurt nor a
# plugin contains benchmark code." The raw baselines (bench/raw/) went into every plugin before.
set(runtime_libs $<TARGET_FILE:gpurt>)
foreach(plugin gpurt_opencl gpurt_cuda gpurt_mock)
  if(TARGET ${plugin})
    list(APPEND runtime_libs $<TARGET_FILE:${plugin}>)
  endif()
endforeach()
add_test(NAME "architecture: libgpurt and the plugins contain no benchmark code"
  COMMAND sh -c "status=0; for f in \"$@\"; do \
if nm -C \"$f\" | grep -i -E 'RawBaseline|raw_baseline|RawChains|raw_chains|gpurt::bench|cublas'; then echo \"$f: benchmark symbols\"; status=1; fi; \
if grep -a -q -E 'libcublas|empty_kernel|tiny_iota|chain_saxpy' \"$f\"; then echo \"$f: benchmark strings\"; status=1; fi; \
done; exit $status" sh ${runtime_libs})
set_tests_properties("architecture: libgpurt and the plugins contain no benchmark code" PROPERTIES LABELS unit)

# What a launch costs, counted through a replaced operator new (its own program, so that the
# replacement touches no other test): on the mock backend, whose launches run on the calling thread.
add_executable(gpurt_launch_cost_tests launch/unit_launch_cost.cpp)
target_link_libraries(gpurt_launch_cost_tests PRIVATE gpurt_test_harness ${CMAKE_DL_LIBS})
target_include_directories(gpurt_launch_cost_tests PRIVATE ${PROJECT_SOURCE_DIR}/backends/mock)
target_compile_definitions(gpurt_launch_cost_tests PRIVATE GPURT_MOCK_PLUGIN="$<TARGET_FILE:gpurt_mock>")
add_dependencies(gpurt_launch_cost_tests gpurt_mock)
gpurt_warnings(gpurt_launch_cost_tests)
gpurt_discover_tests(gpurt_launch_cost_tests DEVICE mock:0 LABEL unit ENV "GPURT_ENABLE_MOCK=1")
