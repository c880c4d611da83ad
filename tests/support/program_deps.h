/*
 * program_deps.h - tests: a program's dependency listing (per instruction, the instructions it
 * waits for, in order), for comparing the dependencies two builds derived.
 */
#ifndef GS_TEST_PROGRAM_DEPS_H
#define GS_TEST_PROGRAM_DEPS_H

#include <cstdint>
#include <vector>

#include "gs/isa.h"

using Deps = std::vector<std::vector<uint32_t>>;

inline Deps deps_of(const gs_program *p)
{
    Deps d(gs_program_count(p));
    for (size_t i = 0; i < d.size(); i++) {
        const gs_instr *in = gs_program_instr(p, i);
        d[i].assign(in->deps, in->deps + in->n_deps);
    }
    return d;
}

#endif
