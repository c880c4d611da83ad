/*
 * instr_view.h - tests: a hand-made gs_instr_draft seen as a gs_instr (gs_instr_draft_view), for
 * the functions that evaluate instructions (gs/cost.h): `gs_cost_flops(view(draft))`; and
 * an empty draft to fill in.
 */
#ifndef GS_TEST_INSTR_VIEW_H
#define GS_TEST_INSTR_VIEW_H

#include <string.h>

#include "gs/isa.h"

/* Holds the instruction whose operand pointers point into the draft: valid while the draft is. */
struct InstrView {
    gs_instr v;
    operator const gs_instr *() const { return &v; }
};

inline InstrView view(const gs_instr_draft &d)
{
    InstrView r;
    gs_instr_draft_view(&d, &r.v);
    return r;
}

/* An empty draft of opcode `op` on engine `e`: every field zero, every operand slot unused
 * (tensor = -1), as the builder leaves the slots an instruction does not use. */
inline gs_instr_draft empty_draft(gs_opcode op, gs_engine e)
{
    gs_instr_draft d;
    memset(&d, 0, sizeof d);
    d.op = op;
    d.engine = e;
    for (gs_ap &a : d.in)
        a.tensor = -1;
    for (gs_ap &a : d.out)
        a.tensor = -1;
    return d;
}

#endif
