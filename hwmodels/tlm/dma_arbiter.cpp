/* dma_arbiter.cpp - reservations of a delta cycle in a fixed order (see dma_arbiter.h). */
#include "dma_arbiter.h"

#include <algorithm>

namespace gs_tlm
{

void DmaArbiter::update()
{
    serving_.swap(posted_); /* both keep their capacity */
    /* usually one to three requests: insertion sort, stable for equal keys (there are none:
     * instruction indices differ) */
    for (std::size_t k = 1; k < serving_.size(); ++k) {
        const Request x = serving_[k];
        std::size_t j = k;
        for (; j > 0 &&
               (serving_[j - 1].trigger_ps > x.trigger_ps ||
                (serving_[j - 1].trigger_ps == x.trigger_ps && serving_[j - 1].instr > x.instr));
             --j)
            serving_[j] = serving_[j - 1];
        serving_[j] = x;
    }
    for (const Request &q : serving_)
        q.who->reserve(q.instr, q.trigger_ps);
    serving_.clear();
}

} // namespace gs_tlm
