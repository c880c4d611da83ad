/*
 * test_paths.h - where a test finds the source tree, the build tree and the binaries it runs.
 *
 * The paths are given at run time by test_paths.c, the one file compiled with them, and this
 * header is forced into every test source (-include, tests/CMakeLists.txt). They used to be -D
 * flags on every test source, and ccache's base_dir rewrites paths in arguments but not in macro
 * values: every test source of a fresh clone was a cache miss. Each macro is a const char *, so
 * a path is joined with std::string (std::string(GS_SOURCE_DIR) + "/configs"), not by
 * string-literal concatenation.
 */
#ifndef GS_TEST_PATHS_H
#define GS_TEST_PATHS_H

#ifdef __cplusplus
extern "C" {
#endif
const char *gs_test_source_dir(void);
const char *gs_test_binary_dir(void);
const char *gs_test_gensweep_bin(void);
const char *gs_test_faults_bin(void);
#ifdef __cplusplus
}
#endif

#define GS_SOURCE_DIR (gs_test_source_dir())
#define GS_BINARY_DIR (gs_test_binary_dir())
#define GS_GENSWEEP_BIN (gs_test_gensweep_bin())
#define GS_FAULTS_BIN (gs_test_faults_bin())

#endif
