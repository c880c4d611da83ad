# The NKI front end end to end (tests/nki/test_*.py) with Debian's interpreter, which sees
# python3-numpy (the python3 first on PATH may be another build without it). One CTest test per
# unittest class, found in the files when CMake configures (a new class is a new test; CMake
# re-runs when a file changes), so the classes run in parallel and a failure names itself. A
# class whose name ends in PerGeneration loops over the generations: it runs once per
# generation (GS_NKI_GENS), as nki_<file>_<class>_<gen>.
set(GS_NKI_GENS gen2 gen3 gen4)
foreach(file test_frontend test_topk test_nki03 test_views)
  set(py ${CMAKE_CURRENT_SOURCE_DIR}/nki/${file}.py)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${py})
  file(STRINGS ${py} classes REGEX "^class [A-Za-z0-9_]+\\(unittest\\.TestCase\\):")
  if(NOT classes)
    message(FATAL_ERROR "${py}: no unittest.TestCase class found")
  endif()
  string(REGEX REPLACE "^test_" "" short ${file})
  foreach(line ${classes})
    string(REGEX REPLACE "^class ([A-Za-z0-9_]+)\\(.*" "\\1" cls "${line}")
    if(cls MATCHES "PerGeneration$")
      set(gens ${GS_NKI_GENS})
    else()
      set(gens all)
    endif()
    foreach(gen ${gens})
      set(name nki_${short}_${cls})
      set(env "GENSWEEP=$<TARGET_FILE:gensweep>")
      if(NOT gen STREQUAL "all")
        set(name ${name}_${gen})
        list(APPEND env "GS_NKI_GENS=${gen}")
      endif()
      add_test(NAME ${name} COMMAND /usr/bin/python3 ${py} -v ${cls})
      set_tests_properties(${name} PROPERTIES LABELS "nki;kernel" TIMEOUT 600
        ENVIRONMENT "${env}")
    endforeach()
  endforeach()
endforeach()
