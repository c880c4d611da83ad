# The kernel-facing header hides programs and configs, and kernels include nothing else of
# gensweep. Run as: cmake -DCC=<c compiler> -DINCLUDE=<hwmodels/include> -DHEADER=gs/kernel.h
#   [-DKERNELS=<kernels dir>] -P kernel_header_check.cmake
# Preprocesses a translation unit holding only `#include <HEADER>` and fails if any name of the
# harness side (program, instruction, config, builder creation) is declared in the output: a
# kernel could then reach the program behind the builder's checks. With KERNELS, also fails if
# a kernel source includes a gensweep header other than gs/kernel.h (local helpers
# kernel_util.h and matmul.h, themselves limited to gs/kernel.h, are allowed; the registry
# suite.c is not a kernel). CTest runs it once on gs/kernel.h and, expected to fail, on
# gs/builder.h, so the check is shown to catch a header that exposes them.
cmake_minimum_required(VERSION 3.16)
foreach(v CC INCLUDE HEADER)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "kernel_header_check: -D${v}=... is required")
  endif()
endforeach()

string(REPLACE "/" "_" tu_name "${HEADER}")
set(tu "${CMAKE_CURRENT_BINARY_DIR}/header_check_${tu_name}.c")
file(WRITE "${tu}" "#include \"${HEADER}\"\n")
execute_process(COMMAND "${CC}" -std=c11 -E -P -I "${INCLUDE}" "${tu}"
  OUTPUT_VARIABLE pp ERROR_VARIABLE pp_err RESULT_VARIABLE rc)
file(REMOVE "${tu}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kernel_header_check: preprocessing ${HEADER} failed:\n${pp_err}")
endif()

# Whole identifiers a kernel must not see (each would give it a way around the builder).
set(forbidden
  gs_program gs_program_append_raw gs_program_create gs_program_add_tensor gs_program_config
  gs_instr gs_tensor_info gs_buffer_info
  gs_config gs_config_store gs_num gs_config_get gs_config_set gs_config_load
  gs_kb_create gs_kb_free)
set(found "")
foreach(name ${forbidden})
  if(pp MATCHES "(^|[^A-Za-z0-9_])${name}([^A-Za-z0-9_]|$)")
    list(APPEND found ${name})
  endif()
endforeach()
if(found)
  string(REPLACE ";" ", " found "${found}")
  message(FATAL_ERROR "${HEADER} exposes harness-side names to kernels: ${found} "
    "(kernels must see only the builder API; move them to gs/builder.h or gs/isa.h)")
endif()
message(STATUS "${HEADER}: no program, instruction or config names visible")

if(DEFINED KERNELS)
  file(GLOB sources "${KERNELS}/*.c" "${KERNELS}/*.h")
  set(allowed "gs/kernel.h" "kernel_util.h" "matmul.h")
  set(bad "")
  foreach(src ${sources})
    get_filename_component(base "${src}" NAME)
    if(base STREQUAL "suite.c" OR base STREQUAL "suite.h")
      continue()
    endif()
    file(STRINGS "${src}" incs REGEX "^[ \t]*#[ \t]*include")
    foreach(line ${incs})
      if(line MATCHES "\"([^\"]+)\"")
        set(inc "${CMAKE_MATCH_1}")
      elseif(line MATCHES "<(gs/[^>]+)>")
        set(inc "${CMAKE_MATCH_1}")
      else()
        continue() # a system header (libc, cblas for the references)
      endif()
      list(FIND allowed "${inc}" ok)
      if(ok EQUAL -1)
        list(APPEND bad "${base}: ${inc}")
      endif()
    endforeach()
  endforeach()
  if(bad)
    string(REPLACE ";" "\n  " bad "${bad}")
    message(FATAL_ERROR "kernel sources include more than gs/kernel.h (and the local helpers "
      "kernel_util.h, matmul.h):\n  ${bad}")
  endif()
  message(STATUS "kernels/: every kernel includes only gs/kernel.h and local helpers")
endif()
