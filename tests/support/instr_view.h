/*
 * instr_view.h - tests: a hand-made gs_instr_draft seen as a gs_instr (gs_instr_draft_view), for
 * the functions that evaluate instructions (gs/cost.h): `gs_cost_flops(view(draft))`.
 */
#ifndef GS_TEST_INSTR_VIEW_H
#define GS_TEST_INSTR_VIEW_H

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

#endif
