/*
 * gs_test_shim.h - lets test helpers written in C report failures into GoogleTest with their
 * own file and line. Include from C or C++; the implementation (gs_test_shim.cpp) forwards to
 * ADD_FAILURE_AT, so a failure inside a C checker fails the running gtest case.
 */
#ifndef GS_TEST_SHIM_H
#define GS_TEST_SHIM_H

#ifdef __cplusplus
extern "C" {
#endif

void gs_test_fail_at(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* GS_TEST_CHECK(cond, fmt, ...): report a failure (non-fatal) when cond is false; evaluates to
 * cond so a helper can stop early. */
#define GS_TEST_CHECK(cond, ...)                                                                   \
    ((cond) ? 1 : (gs_test_fail_at(__FILE__, __LINE__, __VA_ARGS__), 0))

#ifdef __cplusplus
}
#endif
#endif
