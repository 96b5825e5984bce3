# gpurt_plugin(<target>): makes a MODULE library target a gpurt backend plugin: the file name
# libgpurt_<name>.so comes from OUTPUT_NAME gpurt_<name>; it compiles against the plugin SDK
# (gpurt/plugin/abi.h, the optional gpurt/plugin/cxx.hpp, and the signature scanner), hides
# every symbol and exports only its C entry points (gpurt_* through gpurt_plugin.map), so nothing
# but C crosses the plugin boundary. Used in the tree and, installed with the package, by
# backends built out of tree (docs/writing-a-backend.md).
set(GPURT_PLUGIN_MAP "${CMAKE_CURRENT_LIST_DIR}/gpurt_plugin.map" CACHE INTERNAL "")
function(gpurt_plugin target)
  if(TARGET gpurt::plugin_sdk)
    target_link_libraries(${target} PRIVATE gpurt::plugin_sdk)
  else()
    target_link_libraries(${target} PRIVATE gpurt_plugin_api)
  endif()
  set_target_properties(${target} PROPERTIES PREFIX "lib" C_VISIBILITY_PRESET hidden CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON LINK_DEPENDS "${GPURT_PLUGIN_MAP}")
  target_link_options(${target} PRIVATE "LINKER:--version-script=${GPURT_PLUGIN_MAP}")
endfunction()
