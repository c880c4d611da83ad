# Installation and packaging: `cmake --install` (bin/gensweep, share/gensweep/configs, man pages,
# bash completion) and `cpack -G DEB`. The CLI finds the installed configs relative to its own
# binary (harness/sweep/datadir.h), so any prefix works.
include(GNUInstallDirs)

install(TARGETS gensweep RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The generation configs, their tuning files and their schema (the default config directory).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/configs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gensweep/configs
  FILES_MATCHING PATTERN "*.yaml" PATTERN "*.json" PATTERN "SCHEMA.md")

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
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS bash-completion)
set(CPACK_PACKAGE_DIRECTORY ${PROJECT_BINARY_DIR}/packages)
include(CPack)
