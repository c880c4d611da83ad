# Installation and packaging: `cmake --install` (bin/gensweep; share/gensweep/configs,
# workloads and calibration; man pages, bash completion, share/doc/gensweep/copyright) and
# `cpack -G DEB`. The CLI finds the installed data relative to its own binary
# (harness/sweep/datadir.h), so any prefix works.
include(GNUInstallDirs)

install(TARGETS gensweep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The data files shipped, by name: a file in these folders that is not listed here (a config
# being written, a tuning file from `tune --write`, anything untracked) is never packaged. A
# list works from a release tarball without .git too; in a git checkout, configure also fails
# when a tracked file of these folders is missing from the list, so a new generation or
# workload cannot be committed and then silently left out of the package.
set(GS_SHIPPED_configs gen1.yaml gen2.yaml gen3.yaml gen4.yaml SCHEMA.md
  whatif/gen3-2x-sbuf.yaml whatif/small-core.yaml)
set(GS_SHIPPED_workloads README.md
  llama3-8b-decode-4k.yaml llama3-8b-decode-32k.yaml llama3-8b-prefill-2k.yaml
  llama3-70b-decode-4k.yaml llama3-70b-decode-32k.yaml llama3-70b-prefill-2k.yaml)
set(GS_SHIPPED_calibration README.md cases.yaml)

find_package(Git QUIET)
foreach(dir configs workloads calibration)
  foreach(f IN LISTS GS_SHIPPED_${dir})
    if(NOT EXISTS ${PROJECT_SOURCE_DIR}/${dir}/${f})
      message(FATAL_ERROR "cmake/Install.cmake ships ${dir}/${f}, which does not exist")
    endif()
    get_filename_component(sub ${f} DIRECTORY)
    install(FILES ${PROJECT_SOURCE_DIR}/${dir}/${f}
      DESTINATION ${CMAKE_INSTALL_DATADIR}/gensweep/${dir}/${sub})
  endforeach()
  if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${PROJECT_SOURCE_DIR} ls-files -- ${dir}
      OUTPUT_VARIABLE tracked RESULT_VARIABLE rc ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(rc EQUAL 0 AND tracked)
      string(REPLACE "\n" ";" tracked "${tracked}")
      foreach(t IN LISTS tracked)
        string(LENGTH "${dir}/" n)
        string(SUBSTRING "${t}" ${n} -1 rel)
        if(NOT rel IN_LIST GS_SHIPPED_${dir})
          message(FATAL_ERROR "${t} is tracked by git but not shipped: add it to "
            "GS_SHIPPED_${dir} in cmake/Install.cmake (every tracked file of ${dir}/ is)")
        endif()
      endforeach()
    endif()
  endif()
endforeach()

# The Debian copyright file (machine-readable format 1.0).
install(FILES ${PROJECT_SOURCE_DIR}/cmake/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

# The NKI front end (docs/NKI.md): `gensweep nki` finds it at share/gensweep/python.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gensweep/python
  FILES_MATCHING PATTERN "*.py" PATTERN "__pycache__" EXCLUDE)

# Man pages from the binary's own --help text (scripts/gen-man.sh), regenerated whenever
# gensweep is rebuilt, compressed as Debian ships them.
set(GS_MAN_DIR ${PROJECT_BINARY_DIR}/man)
add_custom_command(OUTPUT ${GS_MAN_DIR}/.stamp
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${GS_MAN_DIR}
  COMMAND bash ${PROJECT_SOURCE_DIR}/scripts/gen-man.sh $<TARGET_FILE:gensweep> ${GS_MAN_DIR}
  COMMAND sh -c "gzip -9nf '${GS_MAN_DIR}'/*.1"
  COMMAND ${CMAKE_COMMAND} -E touch ${GS_MAN_DIR}/.stamp
  DEPENDS gensweep ${PROJECT_SOURCE_DIR}/scripts/gen-man.sh
  COMMENT "man pages from gensweep --help"
  VERBATIM)
add_custom_target(gensweep_man ALL DEPENDS ${GS_MAN_DIR}/.stamp)
install(DIRECTORY ${GS_MAN_DIR}/ DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  FILES_MATCHING PATTERN "*.1.gz")

install(FILES ${PROJECT_SOURCE_DIR}/scripts/gensweep-completion.bash
  DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME gensweep)

set(CPACK_PACKAGE_NAME gensweep)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "multi-generation NeuronCore-class accelerator model and kernel portability harness")
set(CPACK_PACKAGE_CONTACT "gensweep maintainers <gensweep@invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# Runtime libraries (libsystemc, libyaml, libcjson, libopenblas, libsqlite3...) from the binary.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The NKI front end (`gensweep nki`, share/gensweep/python) runs on Debian's Python with numpy:
# nothing in the binary tells dpkg-shlibdeps so.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.9), python3-numpy")
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS bash-completion)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
include(CPack)
