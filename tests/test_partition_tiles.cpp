// The fixed-partition splits of a sequence's visible tiles (kernels/partition_tiles.cuh): every
// tile read by exactly one partition, the partitions' counts within one of each other, and each
// split's own shape: first tile apart (partition k's first tile is tile k, the rest one run after
// the P first tiles) or one run (partition k's tiles consecutive and after partition k - 1's).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "kernels/partition_tiles.cuh"

namespace {

using Split = mha::PartitionTiles (*)(int, int, int);

// The tiles partition `part` reads, in the kernel's order: the first, then the run.
std::vector<int> tiles_of(const mha::PartitionTiles& own) {
  std::vector<int> read;
  if (own.count > 0) read.push_back(own.first);
  for (int i = 1; i < own.count; ++i) read.push_back(own.run_begin + i - 1);
  return read;
}

// Every tile once, counts within one; `shape` checks each partition's tiles.
template <class Shape>
void check_split(Split split, Shape shape) {
  for (int tiles = 0; tiles <= 300; ++tiles) {
    for (int parts = 1; parts <= 70; ++parts) {
      std::vector<int> readers(tiles, 0);
      int fewest = tiles + 1, most = -1;
      for (int part = 0; part < parts; ++part) {
        const mha::PartitionTiles own = split(tiles, parts, part);
        ASSERT_GE(own.count, 0) << tiles << " tiles, " << parts << " parts, part " << part;
        const std::vector<int> read = tiles_of(own);
        for (int tile : read) {
          ASSERT_GE(tile, 0);
          ASSERT_LT(tile, tiles) << tiles << " tiles, " << parts << " parts, part " << part;
          ++readers[tile];
        }
        shape(tiles, parts, part, read);
        fewest = std::min(fewest, own.count);
        most = std::max(most, own.count);
      }
      for (int t = 0; t < tiles; ++t)
        ASSERT_EQ(readers[t], 1) << "tile " << t << " of " << tiles << ", " << parts << " parts";
      EXPECT_LE(most - fewest, 1) << tiles << " tiles, " << parts << " parts";
    }
  }
}

TEST(PartitionTiles, FirstApartEveryTileOnceFirstTileKnownRestContiguousBalanced) {
  check_split(mha::partition_tiles_first_apart,
              [](int tiles, int parts, int part, const std::vector<int>& read) {
                if (read.empty()) return;
                ASSERT_EQ(read[0], part) << tiles << " tiles, " << parts << " parts";
                for (size_t i = 1; i < read.size(); ++i) {
                  ASSERT_GE(read[i], parts) << "the run starts after the P first tiles";
                  if (i > 1) {
                    ASSERT_EQ(read[i], read[i - 1] + 1) << "the run is contiguous";
                  }
                }
              });
}

TEST(PartitionTiles, OneRunEveryTileOnceConsecutiveInPartitionOrderBalanced) {
  int previous_end = 0;
  check_split(mha::partition_tiles_one_run,
              [&](int tiles, int parts, int part, const std::vector<int>& read) {
                if (part == 0) previous_end = 0;
                for (size_t i = 0; i < read.size(); ++i)
                  ASSERT_EQ(read[i], previous_end + static_cast<int>(i))
                      << tiles << " tiles, " << parts << " parts, part " << part;
                previous_end += static_cast<int>(read.size());
              });
}

TEST(PartitionTiles, MorePartitionsThanTilesLeavesTheRestEmpty) {
  for (Split split : {mha::partition_tiles_first_apart, mha::partition_tiles_one_run}) {
    int reading = 0;
    for (int part = 0; part < 8; ++part) reading += split(3, 8, part).count > 0 ? 1 : 0;
    EXPECT_EQ(reading, 3);
  }
  const mha::PartitionTiles past = mha::partition_tiles_first_apart(3, 8, 5);
  EXPECT_EQ(past.count, 0);
  const mha::PartitionTiles last = mha::partition_tiles_first_apart(3, 8, 2);
  EXPECT_EQ(last.count, 1);
  EXPECT_EQ(last.first, 2);
}

}  // namespace
