// sc_floor.cpp - two SC_THREADs ping-ponging with timed notifications (see sc_floor.h).
#include "sc_floor.h"

#include <chrono>
#include <exception>
#include <systemc>

namespace
{

// Each side waits for its event and notifies the other's 1 ns later: every handoff is one timed
// notification, one advance of simulated time and one context switch, as when a stream thread
// of the model waits out an instruction's duration.
struct PingPong : sc_core::sc_module {
    sc_core::sc_event to_a, to_b;
    long rounds;
    PingPong(sc_core::sc_module_name n, long r) : sc_core::sc_module(n), rounds(r)
    {
        SC_THREAD(ping);
        SC_THREAD(pong);
    }
    void ping()
    {
        for (long i = 0; i < rounds; i++) {
            to_b.notify(1, sc_core::SC_NS);
            sc_core::wait(to_a);
        }
    }
    void pong()
    {
        for (long i = 0; i < rounds; i++) {
            sc_core::wait(to_b);
            to_a.notify(1, sc_core::SC_NS);
        }
    }
    SC_HAS_PROCESS(PingPong);
};

} // namespace

extern "C" double gs_sc_floor_ns_per_switch(long switches)
{
    long rounds = (switches + 1) / 2;
    if (rounds < 1) rounds = 1;
    try {
        PingPong pp("gs_sc_floor", rounds);
        auto t0 = std::chrono::steady_clock::now();
        sc_core::sc_start();
        double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return s * 1e9 / (double)(2 * rounds);
    } catch (const std::exception &) {
        return -1.0;
    }
}
