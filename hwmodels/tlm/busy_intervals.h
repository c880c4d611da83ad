/*
 * busy_intervals.h - the reservation calendar of a work-conserving bandwidth server (the HBM
 * target, hbm_target.h): sorted, disjoint busy intervals in picoseconds.
 *
 * A request arriving at `arrival` with `service` ps of work takes the idle time after its
 * arrival, gap by gap, until it has had its service time: a later reservation for an earlier
 * time fills the gaps instead of queueing behind a future one, and no idle interval is skipped
 * because it is too short. Plain C++ (no SystemC), so the calendar is tested on its own.
 */
#ifndef GS_TLM_BUSY_INTERVALS_H
#define GS_TLM_BUSY_INTERVALS_H

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gs_tlm
{

class BusyIntervals
{
  public:
    /* Reserve `service` ps from `arrival` on (arrival >= now; `now` never decreases between
     * calls). Returns when the request has had its service time (arrival when service is 0).
     * Intervals that ended by `now` are forgotten. No allocation once the calendar has grown to
     * its working size. */
    uint64_t reserve(uint64_t now, uint64_t arrival, uint64_t service);
    /* Intervals currently kept (for tests). */
    std::size_t size() const { return busy_.size(); }

  private:
    /* [start, end), sorted, disjoint */
    std::vector<std::pair<uint64_t, uint64_t>> busy_;
};

} // namespace gs_tlm

#endif
