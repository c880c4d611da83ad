/* hbm_target.cpp - shared device-memory bandwidth server (see hbm_target.h). */
#include "hbm_target.h"

#include <algorithm>

namespace gs_tlm
{

HbmTarget::HbmTarget(sc_core::sc_module_name name, const gs_config *cfg)
    : sc_core::sc_module(name), socket("socket"), bytes_per_ns_(cfg->hbm_bandwidth.v)
{
    socket.register_b_transport(this, &HbmTarget::b_transport);
}

void HbmTarget::b_transport(int, tlm::tlm_generic_payload &trans, sc_core::sc_time &delay)
{
    const uint64_t now = sc_core::sc_time_stamp().value();
    const uint64_t arrival = now + delay.value();
    const uint64_t len = trans.get_data_length();
    const uint64_t service = service_ps(len);
    const uint64_t t = busy_.reserve(now, arrival, service);
    busy_ps_ += service;
    bytes_ += len;
    delay = sc_core::sc_time::from_value(std::max(t, arrival) - now);
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

} // namespace gs_tlm
