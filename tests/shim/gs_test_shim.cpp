// gs_test_shim.cpp - C-callable failure reporting into GoogleTest (see gs_test_shim.h).
#include "gs_test_shim.h"

#include <cstdarg>
#include <cstdio>
#include <gtest/gtest.h>

extern "C" void gs_test_fail_at(const char *file, int line, const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ADD_FAILURE_AT(file, line) << buf;
}
