// The kernels' double reference product (cblas_dgemm) against the plain triple loop it
// replaced: the same result up to the order of the double additions, for every transpose
// combination and row pitches wider than the rows.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

extern "C" {
#include "kernel_util.h"
}

namespace
{

struct Case {
    int ta, tb;
    int64_t M, N, K;
};

void run(const Case &c)
{
    std::mt19937_64 rng(42 + c.M * 7 + c.N * 3 + c.K);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    int64_t ar = c.ta ? c.K : c.M, ac = c.ta ? c.M : c.K;
    int64_t br = c.tb ? c.N : c.K, bc = c.tb ? c.K : c.N;
    int64_t lda = ac + 3, ldb = bc + 1, ldc = c.N + 2;
    std::vector<double> a((size_t)(ar * lda)), b((size_t)(br * ldb));
    for (auto &x : a)
        x = u(rng);
    for (auto &x : b)
        x = u(rng);
    std::vector<double> fast((size_t)(c.M * ldc), -7.0), slow(fast);
    gs_ref_set_scalar(0);
    gs_ref_gemm(c.ta, c.tb, c.M, c.N, c.K, a.data(), lda, b.data(), ldb, fast.data(), ldc);
    gs_ref_set_scalar(1);
    gs_ref_gemm(c.ta, c.tb, c.M, c.N, c.K, a.data(), lda, b.data(), ldb, slow.data(), ldc);
    gs_ref_set_scalar(0);
    for (int64_t m = 0; m < c.M; m++)
        for (int64_t n = 0; n < c.N; n++) {
            double x = 0.0; // the textbook definition, independently of both paths
            for (int64_t k = 0; k < c.K; k++)
                x += (c.ta ? a[(size_t)(k * lda + m)] : a[(size_t)(m * lda + k)]) *
                     (c.tb ? b[(size_t)(n * ldb + k)] : b[(size_t)(k * ldb + n)]);
            size_t i = (size_t)(m * ldc + n);
            double tol = 1e-13 * (double)c.K;
            ASSERT_NEAR(fast[i], x, tol) << "dgemm m=" << m << " n=" << n;
            ASSERT_NEAR(slow[i], x, tol) << "loop m=" << m << " n=" << n;
        }
    // padding between rows is not written
    for (int64_t m = 0; m < c.M; m++)
        for (int64_t n = c.N; n < ldc; n++) {
            ASSERT_EQ(fast[(size_t)(m * ldc + n)], -7.0);
            ASSERT_EQ(slow[(size_t)(m * ldc + n)], -7.0);
        }
}

} // namespace

TEST(RefGemm, MatchesTheTripleLoopForEveryTranspose)
{
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            run({ta, tb, 37, 53, 129});
            run({ta, tb, 1, 1, 1});
            run({ta, tb, 64, 5, 300});
        }
}

TEST(RefGemm, EmptyReductionGivesZeros)
{
    std::vector<double> c(6, 5.0);
    double a = 1.0, b = 1.0;
    gs_ref_gemm(0, 0, 2, 3, 0, &a, 1, &b, 3, c.data(), 3);
    for (double x : c)
        EXPECT_EQ(x, 0.0);
}
