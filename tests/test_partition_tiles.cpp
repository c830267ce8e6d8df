// The fixed-partition split of a sequence's visible tiles (kernels/partition_tiles.cuh): every
// tile read by exactly one partition, partition k's first tile is tile k, the rest of its tiles
// one contiguous run, and the partitions' counts within one of each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "partition_tiles.cuh"

namespace {

TEST(PartitionTiles, EveryTileOnceFirstTileKnownRestContiguousBalanced) {
  for (int tiles = 0; tiles <= 300; ++tiles) {
    for (int parts = 1; parts <= 70; ++parts) {
      std::vector<int> readers(tiles, 0);
      int fewest = tiles + 1, most = -1;
      for (int part = 0; part < parts; ++part) {
        const mha::PartitionTiles own = mha::partition_tiles(tiles, parts, part);
        ASSERT_GE(own.count, 0) << tiles << " tiles, " << parts << " parts, part " << part;
        if (own.count > 0) {
          ASSERT_EQ(own.first, part) << tiles << " tiles, " << parts << " parts";
          ++readers[own.first];
        }
        for (int i = 1; i < own.count; ++i) {
          const int tile = own.run_begin + i - 1;
          ASSERT_GE(tile, parts) << "the run starts after the P first tiles";
          ASSERT_LT(tile, tiles);
          ++readers[tile];
        }
        fewest = std::min(fewest, own.count);
        most = std::max(most, own.count);
      }
      for (int t = 0; t < tiles; ++t)
        ASSERT_EQ(readers[t], 1) << "tile " << t << " of " << tiles << ", " << parts << " parts";
      EXPECT_LE(most - fewest, 1) << tiles << " tiles, " << parts << " parts";
    }
  }
}

TEST(PartitionTiles, MorePartitionsThanTilesLeavesTheRestEmpty) {
  const mha::PartitionTiles past = mha::partition_tiles(3, 8, 5);
  EXPECT_EQ(past.count, 0);
  const mha::PartitionTiles last = mha::partition_tiles(3, 8, 2);
  EXPECT_EQ(last.count, 1);
  EXPECT_EQ(last.first, 2);
}

}  // namespace
