/* hbm_target.cpp - shared device-memory bandwidth server (see hbm_target.h). */
#include "hbm_target.h"

#include <algorithm>
#include <cmath>

namespace gs_tlm
{

HbmTarget::HbmTarget(sc_core::sc_module_name name, const gs_config *cfg)
    : sc_core::sc_module(name), socket("socket"), bytes_per_ns_(cfg->hbm_bandwidth.v)
{
    socket.register_b_transport(this, &HbmTarget::b_transport);
}

uint64_t HbmTarget::service_ps(uint64_t bytes) const
{
    return (uint64_t)std::ceil((double)bytes * 1000.0 / bytes_per_ns_);
}

void HbmTarget::b_transport(int, tlm::tlm_generic_payload &trans, sc_core::sc_time &delay)
{
    const uint64_t now = sc_core::sc_time_stamp().value();
    const uint64_t arrival = now + delay.value();
    const uint64_t len = trans.get_data_length();
    const uint64_t service = service_ps(len);
    size_t drop = 0;
    while (drop < busy_.size() && busy_[drop].second <= now)
        ++drop;
    busy_.erase(busy_.begin(), busy_.begin() + (std::ptrdiff_t)drop);
    /* the request takes the idle time after its arrival, gap by gap, until it has had its
     * service time (work-conserving: no idle interval is skipped because it is too short) */
    std::vector<std::pair<uint64_t, uint64_t>> merged;
    merged.reserve(busy_.size() + 4);
    uint64_t t = arrival, remaining = service;
    size_t k = 0;
    for (; k < busy_.size() && busy_[k].second <= t; ++k)
        merged.push_back(busy_[k]);
    while (remaining > 0) {
        if (k < busy_.size() && busy_[k].first <= t) {
            merged.push_back(busy_[k]);
            t = std::max(t, busy_[k].second);
            ++k;
            continue;
        }
        const uint64_t gap_end = k < busy_.size() ? busy_[k].first : UINT64_MAX;
        const uint64_t take = std::min(remaining, gap_end - t);
        if (!merged.empty() && merged.back().second == t)
            merged.back().second = t + take;
        else
            merged.emplace_back(t, t + take);
        t += take;
        remaining -= take;
    }
    for (; k < busy_.size(); ++k) {
        if (!merged.empty() && merged.back().second == busy_[k].first)
            merged.back().second = busy_[k].second;
        else
            merged.push_back(busy_[k]);
    }
    busy_.swap(merged);
    busy_ps_ += service;
    bytes_ += len;
    delay = sc_core::sc_time::from_value(std::max(t, arrival) - now);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

} // namespace gs_tlm
