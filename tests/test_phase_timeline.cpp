// Phase-stamp summaries (src/reports/phase_timeline.h) on synthetic stamps whose answer is known.
#include <gtest/gtest.h>

#include <stdexcept>

#include "reports/phase_timeline.h"

namespace mha {
namespace {

// A block that starts at start_ns on `sm`, on a 2 GHz counter: 1 µs to its first tile, 4 µs of
// key loop, 0.5 µs of tail (11,000 cycles, 5,500 ns).
DecodeBlockStamps working_block(uint64_t start_ns, int sm) {
  DecodeBlockStamps b;
  b.start_ns = start_ns;
  b.start_cycle = 10000 + start_ns;  // counters of different SMs need not agree
  b.first_tile_cycle = b.start_cycle + 2000;
  b.loop_end_cycle = b.first_tile_cycle + 8000;
  b.merged_cycle = b.loop_end_cycle + 200;  // 0.1 µs to merge, 0.4 µs to write the partials
  b.exit_cycle = b.loop_end_cycle + 1000;
  b.exit_ns = start_ns + 5500;
  b.sm = sm;
  return b;
}

TEST(PhaseTimeline, PhasesOfKnownStamps) {
  std::vector<DecodeBlockStamps> decode;
  for (int i = 0; i < 4; ++i) decode.push_back(working_block(1000 + 100 * i, i % 2));
  DecodeBlockStamps idle;  // past the plan: no tile, exits at once
  idle.start_ns = 1050, idle.exit_ns = 1080, idle.start_cycle = 5, idle.exit_cycle = 65,
  idle.sm = 0;
  decode.push_back(idle);
  decode.push_back(DecodeBlockStamps{});  // never stamped (not launched): ignored
  std::vector<ReduceBlockStamps> reduce = {{1500, 7000, 8000}, {1600, 6900, 7900}, {1700, 0, 1750}};

  const PhaseSummary s = summarise_phases(decode, reduce, 1.0);
  EXPECT_EQ(s.decode_blocks, 5);
  EXPECT_EQ(s.working_blocks, 4);
  EXPECT_EQ(s.max_blocks_per_sm, 2);      // working blocks only: the idle one shares SM 0
  EXPECT_DOUBLE_EQ(s.ns_per_cycle, 0.5);  // calibrated from the long blocks, not the nominal 1.0
  EXPECT_NEAR(s.start_spread_us, 0.3, 1e-9);
  EXPECT_NEAR(s.ramp_us, 1.0, 1e-9);
  EXPECT_NEAR(s.loop_us, 4.0, 1e-9);
  EXPECT_NEAR(s.tail_us, 0.5, 1e-9);
  EXPECT_NEAR(s.merge_us, 0.1, 1e-9);
  EXPECT_NEAR(s.cluster_wait_us, 0.0, 1e-9);  // no cluster
  EXPECT_NEAR(s.finish_us, 0.4, 1e-9);
  EXPECT_DOUBLE_EQ(s.last_barrier_us, 0);  // no cluster
  EXPECT_NEAR(s.decode_end_us, 5.8, 1e-9);
  EXPECT_EQ(s.reduce_blocks, 2);  // the third had nothing to combine
  EXPECT_NEAR(s.reduce_start_us, 0.5, 1e-9);
  EXPECT_NEAR(s.reduce_waited_us, 6.0, 1e-9);
  EXPECT_NEAR(s.reduce_end_us, 7.0, 1e-9);
  EXPECT_NEAR(s.step_us, 7.0, 1e-9);
  EXPECT_DOUBLE_EQ(s.timer_step_ns, 20);  // the idle block's exit at 1080 to a start at 1100
}

TEST(PhaseTimeline, ShortBlocksUseTheNominalClockAndNoReduceLeavesItsColumnsEmpty) {
  DecodeBlockStamps b;
  b.start_ns = 100, b.exit_ns = 600, b.start_cycle = 0, b.first_tile_cycle = 100,
  b.loop_end_cycle = 300, b.merged_cycle = 320, b.cluster_met_cycle = 360, b.combined_cycle = 376,
  b.exit_cycle = 400;  // a cluster combine
  const PhaseSummary s = summarise_phases({b}, {}, 1.25);
  EXPECT_DOUBLE_EQ(s.ns_per_cycle, 1.25);
  EXPECT_NEAR(s.ramp_us, 0.125, 1e-12);
  EXPECT_NEAR(s.loop_us, 0.25, 1e-12);
  EXPECT_NEAR(s.merge_us, 0.025, 1e-12);
  EXPECT_NEAR(s.cluster_wait_us, 0.05, 1e-12);
  EXPECT_NEAR(s.finish_us, 0.05, 1e-12);
  EXPECT_NEAR(s.last_barrier_us, 0.03, 1e-12);
  EXPECT_EQ(s.reduce_blocks, 0);
  EXPECT_NEAR(s.step_us, 0.5, 1e-12);
  const std::string row = phase_table_row("k", "p", "1", s, 2.25);
  EXPECT_NE(row.find("| k | p | 1 | 1 (1) |"), std::string::npos) << row;
  EXPECT_NE(row.find(" / 0.05 / 0.05 (0.03) | 0.50 | - | - | - | 0.50 | 2.25 | 500 |"),
            std::string::npos)
      << row;
}

TEST(PhaseTimeline, NothingStampedIsAnError) {
  EXPECT_THROW(summarise_phases({DecodeBlockStamps{}}, {}, 1.0), std::invalid_argument);
  EXPECT_THROW(median_phases({}), std::invalid_argument);
}

TEST(PhaseTimeline, MedianOfSteps) {
  PhaseSummary a, b, c;
  a.ramp_us = 1, b.ramp_us = 3, c.ramp_us = 2;
  a.step_us = 10, b.step_us = 9, c.step_us = 30;
  a.decode_blocks = 7;
  const PhaseSummary m = median_phases({a, b, c});
  EXPECT_DOUBLE_EQ(m.ramp_us, 2);
  EXPECT_DOUBLE_EQ(m.step_us, 10);
  EXPECT_EQ(m.decode_blocks, 7);
}

}  // namespace
}  // namespace mha
