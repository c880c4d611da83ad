/* busy_intervals.cpp - reservation calendar of a bandwidth server (see busy_intervals.h). */
#include "busy_intervals.h"

#include <algorithm>

namespace gs_tlm
{

uint64_t BusyIntervals::reserve(uint64_t now, uint64_t arrival, uint64_t service)
{
    /* intervals that ended by now can no longer matter: no arrival is in the past */
    std::size_t drop = 0;
    while (drop < busy_.size() && busy_[drop].second <= now)
        ++drop;
    if (drop) busy_.erase(busy_.begin(), busy_.begin() + (std::ptrdiff_t)drop);
    if (service == 0) return arrival;
    /* the usual case of a busy server: the request arrives within (or at the end of) the last
     * busy interval, so it starts where that ends and extends it */
    if (!busy_.empty() && busy_.back().first <= arrival && arrival <= busy_.back().second) {
        busy_.back().second += service;
        return busy_.back().second;
    }
    /* walk the gaps after the arrival until they hold the service time */
    std::size_t first = 0;
    while (first < busy_.size() && busy_[first].second <= arrival)
        ++first;
    uint64_t t = arrival, remaining = service;
    std::size_t k = first;
    while (remaining > 0) {
        if (k < busy_.size() && busy_[k].first <= t) {
            t = std::max(t, busy_[k].second);
            ++k;
            continue;
        }
        const uint64_t gap_end = k < busy_.size() ? busy_[k].first : UINT64_MAX;
        const uint64_t take = std::min(remaining, gap_end - t);
        t += take;
        remaining -= take;
    }
    /* every gap of [arrival, t) is taken now: that interval joins the calendar, merged in place
     * with the intervals it overlaps or touches */
    std::size_t from = first;
    if (from > 0 && busy_[from - 1].second == arrival) --from;
    std::size_t last = first;
    while (last < busy_.size() && busy_[last].first <= t)
        ++last;
    if (last == from) {
        busy_.insert(busy_.begin() + (std::ptrdiff_t)from, std::make_pair(arrival, t));
    } else {
        busy_[from] = std::make_pair(std::min(arrival, busy_[from].first),
                                     std::max(t, busy_[last - 1].second));
        busy_.erase(busy_.begin() + (std::ptrdiff_t)from + 1, busy_.begin() + (std::ptrdiff_t)last);
    }
    return t;
}

} // namespace gs_tlm
