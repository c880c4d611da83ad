/* names.c - the name tables at the bottom of the core: engines (gs/engine.h), memory spaces and
 * opcodes with their default engines (gs/isa_types.h), from the X-macro tables of their headers.
 * The config loader, the ISA and everything above read names here, so neither depends on the
 * other for them. */
#include "gs/engine.h"
#include "gs/isa.h"

static const char *const engine_names[] = {
#define GS_ENGINE_NAME(e, n) n,
    GS_ENGINE_TABLE(GS_ENGINE_NAME)
#undef GS_ENGINE_NAME
};

const char *gs_engine_name(gs_engine e)
{
    if ((int)e < 0 || e >= GS_ENGINE_COUNT) return "?";
    return engine_names[e];
}

static const char *const memspace_names[] = {
#define GS_MS_NAME(e, n) n,
    GS_MEMSPACE_TABLE(GS_MS_NAME)
#undef GS_MS_NAME
};

const char *gs_memspace_name(gs_memspace m)
{
    if ((int)m < 0 || m >= GS_MEMSPACE_COUNT) return "?";
    return memspace_names[m];
}

static const struct {
    const char *name;
    gs_engine engine;
} opcode_info[] = {
#define GS_OP_INFO(e, n, eng) {n, eng},
    GS_OPCODE_TABLE(GS_OP_INFO)
#undef GS_OP_INFO
};

const char *gs_opcode_name(gs_opcode op)
{
    if ((int)op < 0 || op >= GS_OPCODE_COUNT) return "?";
    return opcode_info[op].name;
}

gs_engine gs_opcode_default_engine(gs_opcode op)
{
    if ((int)op < 0 || op >= GS_OPCODE_COUNT) return GS_ENG_VECTOR;
    return opcode_info[op].engine;
}
