# gs_add_sweep_tests(TARGET): register the check suite with CTest, one test per generation x
# kernel ("sweep.gen2.matmul", labels "sweep;gen2;matmul"), each running
#   gensweep sweep --configs configs/genN.yaml --kernels K --suite check --quiet -j 1
# The kernel list is discovered after every build of TARGET (`list kernels --names`), the way
# gtest_discover_tests works, so new kernels appear without touching CMake; the generations
# are the configs/*.yaml files at that moment.
function(gs_add_sweep_tests target)
  set(tests_file "${CMAKE_CURRENT_BINARY_DIR}/sweep_tests.cmake")
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/sweep_tests_include.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND ${CMAKE_COMMAND} -D "GS_EXE=$<TARGET_FILE:${target}>" -D "GS_SRC=${PROJECT_SOURCE_DIR}"
            -D "GS_OUT=${tests_file}" -D "GS_WORK=${CMAKE_CURRENT_BINARY_DIR}/sweep-ctest"
            -P "${CMAKE_CURRENT_FUNCTION_LIST_DIR}/SweepTestsDiscover.cmake"
    BYPRODUCTS "${tests_file}"
    VERBATIM)
  file(WRITE "${include_file}"
    "if(EXISTS \"${tests_file}\")\n  include(\"${tests_file}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
