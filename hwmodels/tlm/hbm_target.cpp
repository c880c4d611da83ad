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

uint64_t HbmTarget::serve(uint64_t now, uint64_t delay_ps, uint64_t bytes)
{
    const uint64_t arrival = now + delay_ps;
    const uint64_t service = service_ps(bytes);
    const uint64_t t = busy_.reserve(now, arrival, service);
    busy_ps_ += service;
    bytes_ += bytes;
    return std::max(t, arrival) - now;
}

void HbmTarget::b_transport(int, tlm::tlm_generic_payload &trans, sc_core::sc_time &delay)
{
    const uint64_t now = sc_core::sc_time_stamp().value();
    if (HbmShares *shares = trans.get_extension<HbmShares>()) {
        for (unsigned k = 0; k < shares->n; ++k)
            shares->req[k].delay_ps = serve(now, shares->req[k].delay_ps, shares->req[k].bytes);
    } else {
        delay = sc_core::sc_time::from_value(serve(now, delay.value(), trans.get_data_length()));
    }
    trans.set_response_status(tlm::TLM_OK_RESPONSE);
}

} // namespace gs_tlm
