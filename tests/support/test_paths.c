/*
 * test_paths.c - the paths of test_paths.h, the one test source compiled with the checkout's and
 * the build tree's absolute paths (GS_TEST_* definitions, tests/CMakeLists.txt).
 */
#include "test_paths.h"

const char *gs_test_source_dir(void)
{
    return GS_TEST_SOURCE_DIR;
}
const char *gs_test_binary_dir(void)
{
    return GS_TEST_BINARY_DIR;
}
const char *gs_test_gensweep_bin(void)
{
    return GS_TEST_GENSWEEP_BIN;
}
const char *gs_test_faults_bin(void)
{
    return GS_TEST_FAULTS_BIN;
}
