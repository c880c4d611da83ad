/* local_mem.cpp - SBUF/PSUM target (see local_mem.h). */
#include "local_mem.h"

namespace gs_tlm
{

LocalMem::LocalMem(sc_core::sc_module_name name, uint64_t size_bytes)
    : sc_core::sc_module(name), socket("socket"), size_(size_bytes)
{
    socket.register_b_transport(this, &LocalMem::b_transport);
}

void LocalMem::b_transport(int, tlm::tlm_generic_payload &trans, sc_core::sc_time &)
{
    ++transactions_;
    trans.set_response_status(trans.get_address() < size_ ? tlm::TLM_OK_RESPONSE
                                                          : tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

} // namespace gs_tlm
