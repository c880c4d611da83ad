/*
 * sc_floor.h - the SystemC floor of this machine, for `gensweep bench`: two SC_THREADs handing
 * control to each other through timed event notifications, the cheapest thing a simulation of
 * timed streams can do per step. Elaborates SystemC: call it only in a process of its own.
 */
#ifndef GS_HARNESS_SC_FLOOR_H
#define GS_HARNESS_SC_FLOOR_H

#ifdef __cplusplus
extern "C" {
#endif

/* Wall nanoseconds per timed switch over `switches` switches (rounded up to an even count);
 * < 0 when SystemC reports an error. */
double gs_sc_floor_ns_per_switch(long switches);

#ifdef __cplusplus
}
#endif
#endif
