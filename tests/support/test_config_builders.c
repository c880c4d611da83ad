/* test_config_builders.c - hand-built generation configs for unit tests (see the header). */
#include "test_config_builders.h"

#include <string.h>

#include "gs/isa.h"

void gs_test_num_set(gs_num *n, double v)
{
    memset(n, 0, sizeof *n);
    n->v = v;
    n->src = "test";
}

static void simd_common(gs_simd_cfg *e, double clock_hz)
{
    e->present = 1;
    gs_test_num_set(&e->lanes, 128);
    gs_test_num_set(&e->cores, 1);
    gs_test_num_set(&e->clock, clock_hz);
    gs_test_num_set(&e->min_ii, 64);
    gs_test_num_set(&e->max_free_sbuf, 65536);
    gs_test_num_set(&e->max_free_psum, 4096);
    for (int t = 0; t < GS_DTYPE_COUNT; t++)
        gs_test_num_set(&e->elems_per_cycle[t], 1.0);
}

void gs_test_config_gen2_like(gs_config *c)
{
    memset(c, 0, sizeof *c);
    c->name = (char *)"gen2-like-test";
    c->family = (char *)"gen2";
    c->path = (char *)"<test>";

    gs_test_num_set(&c->cores, 2);
    gs_test_num_set(&c->hbm_capacity, 32.0 * 1024 * 1024 * 1024);
    gs_test_num_set(&c->hbm_bandwidth, 820.0);
    gs_test_num_set(&c->hbm_latency, 500);
    gs_test_num_set(&c->partitions, 128);
    gs_test_num_set(&c->sbuf_bytes, 24.0 * 1024 * 1024);
    gs_test_num_set(&c->psum_bytes, 2.0 * 1024 * 1024);
    gs_test_num_set(&c->psum_banks, 8);
    gs_test_num_set(&c->sem_latency, 50);
    gs_test_num_set(&c->pool_alignment, 64);
    gs_test_num_set(&c->partition_quadrants, 4);

    gs_tensor_cfg *t = &c->tensor;
    gs_test_num_set(&t->rows, 128);
    gs_test_num_set(&t->cols, 128);
    gs_test_num_set(&t->clock, 2.8e9);
    gs_test_num_set(&t->moving_free_max, 512);
    gs_test_num_set(&t->min_ii, 64);
    gs_test_num_set(&t->stationary_load, 64);
    gs_test_num_set(&t->fixed_overhead, 8);
    gs_test_num_set(&t->rate[GS_FP32], 0.25);
    gs_test_num_set(&t->rate[GS_BF16], 1.0);
    gs_test_num_set(&t->rate[GS_FP16], 1.0);
    gs_test_num_set(&t->rate[GS_INT8], 1.0);

    simd_common(&c->vector, 1.12e9);
    gs_test_num_set(&c->vector.two_input_factor, 2.0);
    gs_test_num_set(&c->vector.slow_op_factor, 8.0);
    gs_test_num_set(&c->vector.psum_read_factor, 1.5);

    simd_common(&c->scalar, 1.4e9);
    gs_test_num_set(&c->scalar.fixed_overhead, 4);
    gs_test_num_set(&c->scalar.table_load, 700);
    gs_test_num_set(&c->scalar.psum_read_factor, 1.5);

    simd_common(&c->gpsimd, 1.4e9);
    gs_test_num_set(&c->gpsimd.cores, 8);
    gs_test_num_set(&c->gpsimd.fixed_overhead, 150);
    gs_test_num_set(&c->gpsimd.two_input_factor, 2.0);
    gs_test_num_set(&c->gpsimd.cross_partition_factor, 4.0);
    gs_test_num_set(&c->gpsimd.gather_row_cycles, 16);

    gs_dma_cfg *d = &c->dma;
    gs_test_num_set(&d->engines, 16);
    gs_test_num_set(&d->queues, 16);
    gs_test_num_set(&d->bandwidth_per_engine, 17.0);
    gs_test_num_set(&d->issue_latency, 1300);
    gs_test_num_set(&d->fixed_latency, 200);
    gs_test_num_set(&d->descriptor_overhead, 30);
    gs_test_num_set(&d->min_efficient_chunk, 512);
    d->transpose = 0;
    d->hw_descriptors = 0;

    c->dtypes =
        (1u << GS_FP32) | (1u << GS_BF16) | (1u << GS_FP16) | (1u << GS_INT8) | (1u << GS_INT32);
    c->ops = ((1ull << GS_OPCODE_COUNT) - 1ull) & ~(1ull << GS_OP_DMA_TRANSPOSE);
}

void gs_test_config_gen3_like(gs_config *c)
{
    gs_test_config_gen2_like(c);
    c->name = (char *)"gen3-like-test";
    c->family = (char *)"gen3";
    gs_test_num_set(&c->cores, 8);
    gs_test_num_set(&c->tensor.clock, 2.4e9);
    gs_test_num_set(&c->tensor.rate[GS_FP8_E4M3], 2.0);
    gs_test_num_set(&c->tensor.rate[GS_FP8_E5M2], 2.0);
    gs_test_num_set(&c->vector.clock, 0.96e9);
    gs_test_num_set(&c->vector.elems_per_cycle[GS_BF16], 2.0);
    gs_test_num_set(&c->scalar.clock, 1.2e9);
    gs_test_num_set(&c->gpsimd.clock, 1.2e9);
    gs_test_num_set(&c->dma.bandwidth_per_engine, 23.0);
    gs_test_num_set(&c->dma.issue_latency, 600);
    gs_test_num_set(&c->dma.fixed_latency, 200);
    gs_test_num_set(&c->dma.transpose_factor, 2.0);
    c->dma.transpose = 1;
    c->dma.hw_descriptors = 1;
    c->dtypes |= (1u << GS_FP8_E4M3) | (1u << GS_FP8_E5M2);
    c->ops = (1ull << GS_OPCODE_COUNT) - 1ull;
}

void gs_test_config_gen1_like(gs_config *c)
{
    gs_test_config_gen2_like(c);
    c->name = (char *)"gen1-like-test";
    c->family = (char *)"gen1";
    memset(&c->gpsimd, 0, sizeof c->gpsimd);
    /* memset stays: the vector engine can do it. */
    c->ops &=
        ~((1ull << GS_OP_IOTA) | (1ull << GS_OP_AFFINE_SELECT) | (1ull << GS_OP_PARTITION_REDUCE) |
          (1ull << GS_OP_PARTITION_BROADCAST) | (1ull << GS_OP_GATHER));
}
