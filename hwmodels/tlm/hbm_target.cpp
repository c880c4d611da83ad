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
    const uint64_t arrival = (sc_core::sc_time_stamp() + delay).value();
    const uint64_t len = trans.get_data_length();
    const uint64_t start = std::max(arrival, next_free_ps_);
    const uint64_t service = service_ps(len);
    next_free_ps_ = start + service;
    busy_ps_ += service;
    bytes_ += len;
    delay = sc_core::sc_time::from_value(next_free_ps_ - sc_core::sc_time_stamp().value());
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

} // namespace gs_tlm
