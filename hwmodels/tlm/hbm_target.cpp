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
    /* earliest gap of `service` at or after the arrival */
    uint64_t start = arrival;
    size_t k = 0;
    while (k < busy_.size() && busy_[k].second <= start)
        ++k;
    for (; k < busy_.size(); ++k) {
        if (start + service <= busy_[k].first) break;
        start = std::max(start, busy_[k].second);
    }
    const uint64_t end = start + service;
    if (service > 0) {
        /* merge with touching neighbours to keep the list short */
        if (k > 0 && busy_[k - 1].second == start) {
            busy_[k - 1].second = end;
            if (k < busy_.size() && busy_[k].first == end) {
                busy_[k - 1].second = busy_[k].second;
                busy_.erase(busy_.begin() + (std::ptrdiff_t)k);
            }
        } else if (k < busy_.size() && busy_[k].first == end) {
            busy_[k].first = start;
        } else {
            busy_.insert(busy_.begin() + (std::ptrdiff_t)k, std::make_pair(start, end));
        }
    }
    busy_ps_ += service;
    bytes_ += len;
    delay = sc_core::sc_time::from_value(end - now);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

} // namespace gs_tlm
