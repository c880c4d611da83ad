# Writes the version source (gs_version.c) at build time, so the commit a binary reports is the
# commit it was built from, not the one CMake was configured at. Run by the gs_version_stamp
# target on every build; configure_file leaves the file untouched (and nothing is recompiled)
# when the text is unchanged.
#   cmake -DGS_SRC=<source dir> -DGS_OUT=<file.c> -DGS_VERSION=<x.y.z> -P Version.cmake
cmake_minimum_required(VERSION 3.22)
find_package(Git QUIET)
set(GS_COMMIT "unknown")
if(GIT_FOUND AND EXISTS "${GS_SRC}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${GS_SRC}" rev-parse --short=12 HEAD
    OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
  if(rc EQUAL 0 AND commit)
    set(GS_COMMIT "${commit}")
    # Tracked files changed since that commit: say so rather than claim the commit.
    execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${GS_SRC}" status --porcelain
        --untracked-files=no
      OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(dirty)
      string(APPEND GS_COMMIT "-dirty")
    endif()
  endif()
endif()
file(CONFIGURE OUTPUT "${GS_OUT}" CONTENT
"/* Generated at build time by cmake/Version.cmake: do not edit. */
#include \"version.h\"

const char *gs_version(void) { return \"@GS_VERSION@\"; }
const char *gs_commit(void) { return \"@GS_COMMIT@\"; }
" @ONLY)
