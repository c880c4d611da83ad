# Find every dependency from Debian packages; a missing one stops configure naming the package.
find_package(PkgConfig)
if(NOT PKG_CONFIG_FOUND)
  message(FATAL_ERROR "pkg-config not found: apt-get install pkg-config")
endif()

macro(gs_require_pkg var module debpkg)
  pkg_check_modules(${var} IMPORTED_TARGET ${module})
  if(NOT ${var}_FOUND)
    message(FATAL_ERROR "${module} not found: apt-get install ${debpkg}")
  endif()
endmacro()

gs_require_pkg(SYSTEMC systemc libsystemc-dev)
gs_require_pkg(YAML yaml-0.1 libyaml-dev)
gs_require_pkg(CJSON libcjson libcjson-dev)
gs_require_pkg(OPENBLAS openblas libopenblas-dev)

find_package(GTest CONFIG QUIET)
if(NOT GTest_FOUND)
  find_package(GTest QUIET)
endif()
if(NOT GTest_FOUND)
  message(FATAL_ERROR "GoogleTest not found: apt-get install libgtest-dev")
endif()
include(GoogleTest)

find_library(GS_LIBM m)
find_package(Threads REQUIRED)
