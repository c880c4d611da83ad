/* The HBM target's reservation calendar against a brute-force one: every picosecond of a small
 * time range is a slot, a request takes the first free slots from its arrival on. */
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "busy_intervals.h"

namespace
{

struct SlotCalendar {
    std::vector<bool> busy;
    explicit SlotCalendar(std::size_t n) : busy(n, false) {}
    uint64_t reserve(uint64_t arrival, uint64_t service)
    {
        uint64_t t = arrival;
        for (uint64_t left = service; left > 0; ++t)
            if (!busy.at(t)) {
                busy[t] = true;
                --left;
                if (left == 0) return t + 1;
            }
        return arrival;
    }
};

TEST(BusyIntervals, MatchesSlotBySlotReservation)
{
    std::mt19937_64 rng(12345);
    for (int run = 0; run < 300; ++run) {
        gs_tlm::BusyIntervals cal;
        SlotCalendar ref(4096);
        uint64_t now = 0;
        const int requests = 10 + (int)(rng() % 60);
        for (int q = 0; q < requests; ++q) {
            now += rng() % 4 == 0 ? rng() % 20 : 0;
            const uint64_t arrival = now + rng() % 40;
            const uint64_t service = rng() % 8 == 0 ? 0 : 1 + rng() % 15;
            const uint64_t want = ref.reserve(arrival, service);
            ASSERT_EQ(cal.reserve(now, arrival, service), want)
                << "run " << run << " request " << q << " now " << now << " arrival " << arrival
                << " service " << service;
        }
    }
}

TEST(BusyIntervals, FillsGapsAndMergesTouchingIntervals)
{
    gs_tlm::BusyIntervals cal;
    EXPECT_EQ(cal.reserve(0, 10, 5), 15u); /* [10,15) */
    EXPECT_EQ(cal.reserve(0, 20, 5), 25u); /* [10,15) [20,25) */
    EXPECT_EQ(cal.size(), 2u);
    /* 3 ps before 10, then 2 in the gap 15..20 */
    EXPECT_EQ(cal.reserve(0, 7, 5), 17u);
    EXPECT_EQ(cal.size(), 2u); /* [7,17) [20,25) */
    EXPECT_EQ(cal.reserve(0, 17, 3), 20u);
    EXPECT_EQ(cal.size(), 1u);             /* [7,25): the gap is filled exactly */
    EXPECT_EQ(cal.reserve(0, 30, 0), 30u); /* no service: no reservation */
    EXPECT_EQ(cal.size(), 1u);
    EXPECT_EQ(cal.reserve(25, 25, 1), 26u); /* [7,25) ended by now: forgotten */
    EXPECT_EQ(cal.size(), 1u);
}

TEST(BusyIntervals, ArrivalWithinTheLastIntervalExtendsIt)
{
    gs_tlm::BusyIntervals cal;
    EXPECT_EQ(cal.reserve(0, 10, 5), 15u);
    EXPECT_EQ(cal.reserve(0, 40, 5), 45u); /* [10,15) [40,45) */
    EXPECT_EQ(cal.reserve(0, 42, 4), 49u); /* inside the last: after it, [10,15) [40,49) */
    EXPECT_EQ(cal.reserve(0, 49, 1), 50u); /* at its end: [10,15) [40,50) */
    EXPECT_EQ(cal.size(), 2u);
    EXPECT_EQ(cal.reserve(0, 12, 10), 25u); /* inside an earlier one: [10,25) [40,50) */
    EXPECT_EQ(cal.size(), 2u);
    EXPECT_EQ(cal.reserve(0, 30, 10), 40u); /* the gap exactly: [10,25) [30,50) */
    EXPECT_EQ(cal.size(), 2u);
    EXPECT_EQ(cal.reserve(0, 20, 10), 55u); /* 5 in 25..30, 5 after 50: [10,55) */
    EXPECT_EQ(cal.size(), 1u);
}

} // namespace
