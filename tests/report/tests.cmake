# Report tests, included from tests/CMakeLists.txt.
# Structure tests (label "report"): the HTML from the fixtures in this folder.
gs_add_gtest(test_report LABELS report SOURCES report/test_report.cpp LIBS gs_report gs_results gs_core)
gs_add_gtest(test_report_models LABELS report SOURCES report/test_report_models.cpp
  LIBS gs_report gs_results gs_core)
gs_add_gtest(test_report_bound LABELS report SOURCES report/test_report_bound.cpp
  LIBS gs_report gs_results gs_core)

# Real-browser test (label "browser"): gensweep writes the report for the check fixture (with the
# baseline and workloads.json: `sweep --suite model --workloads tests/workloads/tiny-decode.yaml,
# tests/workloads/tiny-prefill.yaml --configs configs/gen1.yaml configs/gen2.yaml
# configs/gen3.yaml`) and for the hostile fixture, then headless Chromium loads each (tests/browser).
# node, Debian's chromium and tests/browser/node_modules (npm ci, done by .ci/test) are needed:
# missing ones skip the test on a developer's machine and fail it under CI=true.
set(GS_REPORT_OUT ${PROJECT_BINARY_DIR}/report)
add_test(NAME report_browser_generate
  COMMAND sh -c "mkdir -p \"$1\" && \"$2\" report \"$3/check.json\" --baseline \"$3/baseline.json\" --whatif \"$3/whatif.json\" --tuning \"$3/tuning-gen2.json\" --workloads \"$3/workloads.json\" -o \"$1/report.html\" && \"$2\" report \"$3/hostile.json\" --whatif \"$3/hostile-whatif.json\" -o \"$1/hostile.html\""
          sh ${GS_REPORT_OUT} $<TARGET_FILE:gensweep> ${CMAKE_CURRENT_SOURCE_DIR}/report)
set_tests_properties(report_browser_generate PROPERTIES LABELS "report;browser"
  FIXTURES_SETUP gs_report_html)
find_program(GS_NODE node)
if(NOT GS_NODE)
  set(GS_NODE node) # the test then fails/skips with the shell's "not found"
endif()
foreach(which report hostile)
  set(extra "")
  if(which STREQUAL hostile)
    set(extra --hostile)
  endif()
  add_test(NAME report_browser_${which}
    COMMAND ${GS_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/browser/report_browser_test.mjs
            ${GS_REPORT_OUT}/${which}.html ${GS_REPORT_OUT}/${which}-screenshot.png ${extra})
  set_tests_properties(report_browser_${which} PROPERTIES LABELS browser
    FIXTURES_REQUIRED gs_report_html SKIP_RETURN_CODE 77 TIMEOUT 300
    RESOURCE_LOCK chromium)
endforeach()

# The main job's report on real results, from a sweep made for the test: the shipped configs
# (every generation in configs/), check and perf suites, four kernels chosen so every section the
# browser test checks has content (elementwise_add, rmsnorm: memory-bound, pass everywhere;
# matmul_fp8, embedding: compute/gather, unsupported on some generations, so the status filter
# and the portability matrix have something to hide). The test checks the verdict per generation
# pair, heatmap, per-kernel rooflines with a point per generation, every section, sorting and
# filtering (~5 s of sweep in the asan build, so it runs in every build).
add_test(NAME report_browser_main_generate
  COMMAND $<TARGET_FILE:gensweep> sweep --configs configs --suite all
          --kernels elementwise_add,rmsnorm,matmul_fp8,embedding -j 2 --quiet
          --out ${GS_REPORT_OUT}/main
  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(report_browser_main_generate PROPERTIES LABELS "report;browser"
  FIXTURES_SETUP gs_report_main TIMEOUT 300)
add_test(NAME report_browser_main
  COMMAND ${GS_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/browser/report_browser_test.mjs
          ${GS_REPORT_OUT}/main/report.html ${GS_REPORT_OUT}/main-screenshot.png)
set_tests_properties(report_browser_main PROPERTIES LABELS browser
  FIXTURES_REQUIRED gs_report_main SKIP_RETURN_CODE 77 TIMEOUT 300 RESOURCE_LOCK chromium)

# Never green on missing work: a 3-shard sweep with shard 2 deleted and shard 3 interrupted
# (a job short), `merge --report`
# (tests/report/incomplete_merge_test.sh checks the merge, results.json's "not_run", junit.xml
# and the report's HTML), then the browser test checks the first screen names shard 2/3 and the
# speedup is marked partial.
add_test(NAME report_incomplete_merge
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/report/incomplete_merge_test.sh ${PROJECT_SOURCE_DIR}
          $<TARGET_FILE:gensweep> ${GS_REPORT_OUT}/incomplete)
set_tests_properties(report_incomplete_merge PROPERTIES LABELS "report;browser"
  FIXTURES_SETUP gs_report_incomplete TIMEOUT 300)
add_test(NAME report_browser_incomplete
  COMMAND ${GS_NODE} ${CMAKE_CURRENT_SOURCE_DIR}/browser/report_browser_test.mjs
          ${GS_REPORT_OUT}/incomplete/all/report.html ${GS_REPORT_OUT}/incomplete-screenshot.png
          --incomplete=2/3 --interrupted=3/3)
set_tests_properties(report_browser_incomplete PROPERTIES LABELS browser
  FIXTURES_REQUIRED gs_report_incomplete SKIP_RETURN_CODE 77 TIMEOUT 300 RESOURCE_LOCK chromium)

# The main job's page weight (the report of the whole check + perf sweep stays under 3 MiB) is
# not a test here: only the full sweep can tell, and .ci/run's gate stage runs it with the
# optimised binary (tests/report/page_weight.sh).

# The README's command examples name only files that exist (tests/report/readme_paths_test.sh).
add_test(NAME readme_example_paths
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/report/readme_paths_test.sh ${PROJECT_SOURCE_DIR})
set_tests_properties(readme_example_paths PROPERTIES LABELS unit TIMEOUT 60)
