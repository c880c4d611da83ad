/*
 * gs/builder.h - the harness side of the kernel builder: create a builder over a program (and so
 * over the program's config) for one core, run a kernel on it, free it.
 *
 * Kernels never include this header: gs/kernel.h is all they see, and it names neither programs
 * nor configs. The program a builder appends to is created and read through gs/isa.h.
 */
#ifndef GS_BUILDER_H
#define GS_BUILDER_H

#include "gs/isa.h"
#include "gs/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Create a builder appending to program p for core `core`, with the capabilities of p's config.
 * NULL on OOM (or p NULL / without a config). A core the target lacks is the builder's first
 * error (gs_kb_error). */
gs_kb *gs_kb_create(gs_program *p, unsigned core);
void gs_kb_free(gs_kb *kb); /* releases its pools' tracking, not the program; NULL ok */
/* The program kb appends to (harness side: tests that add raw instructions a kernel cannot). */
gs_program *gs_kb_program(gs_kb *kb);
/* How many history entries (accesses, index candidates, block summaries, dependencies already
 * taken) the dependency tracker has examined for kb's instructions so far: the tracker's cost,
 * counted rather than timed, so that tests can check it stays proportional to the program. */
uint64_t gs_kb_tracker_work(const gs_kb *kb);

#ifdef __cplusplus
}
#endif
#endif
