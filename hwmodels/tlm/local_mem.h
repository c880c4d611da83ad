/*
 * local_mem.h - a core's SBUF or PSUM as a TLM-2.0 target (partitions x bytes per partition,
 * addressed partition-major: address = partition * partition_bytes + byte offset).
 *
 * DMA queues send one transaction per transfer for the SBUF/PSUM side; the target checks the
 * address range and adds no delay. As for HBM, bytes are moved by gs_exec_instr on the run's
 * gs_mem image, not by this target.
 *
 * Not modelled: SBUF/PSUM port bandwidth and bank conflicts between engines and DMA (engine
 * operand access time is part of the cost model).
 */
#ifndef GS_TLM_LOCAL_MEM_H
#define GS_TLM_LOCAL_MEM_H

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>

namespace gs_tlm
{

class LocalMem : public sc_core::sc_module
{
  public:
    tlm_utils::multi_passthrough_target_socket<LocalMem> socket;

    LocalMem(sc_core::sc_module_name name, uint64_t size_bytes);
    uint64_t size() const { return size_; }
    uint64_t transactions() const { return transactions_; }

  private:
    void b_transport(int id, tlm::tlm_generic_payload &trans, sc_core::sc_time &delay);
    uint64_t size_;
    uint64_t transactions_ = 0;
};

} // namespace gs_tlm

#endif
