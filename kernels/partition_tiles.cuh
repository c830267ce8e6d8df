// Which of a sequence's visible key tiles a fixed partition reads (docs/design.md, Split-K). Two
// splits, both giving every partition one contiguous run of tiles apart from at most one first
// tile, and counts within one of each other:
//   - first tile apart (contiguous caches under null/causal masks): partition `part`'s first
//     tile is visible tile `part`, known before the sequence's length, and its others a 1/P
//     share of tiles P .. T - 1, so the kernel can start the first copy while the length loads;
//   - one run (paged caches, windows, chunks): partition `part` reads tiles
//     [part·T/P, (part+1)·T/P), its first tile the run's first.
// Host and device share these formulas (the kernel's block_length, tests/test_partition_tiles.cpp).
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers

namespace mha {

// Tiles relative to the first visible one: `first` (when count > 0), then run_begin,
// run_begin + 1, ... (count - 1 tiles).
struct PartitionTiles {
  int first, run_begin, count;
};

__host__ __device__ inline PartitionTiles partition_tiles_first_apart(int tiles, int parts,
                                                                      int part) {
  const long long rest = tiles > parts ? tiles - parts : 0;  // the tiles after the P first ones
  const int run_begin = parts + static_cast<int>(part * rest / parts);
  const int run_end = parts + static_cast<int>((part + 1) * rest / parts);
  return {part, run_begin, (part < tiles ? 1 : 0) + run_end - run_begin};
}

__host__ __device__ inline PartitionTiles partition_tiles_one_run(int tiles, int parts, int part) {
  const int begin = static_cast<int>(static_cast<long long>(part) * tiles / parts);
  const int end = static_cast<int>(static_cast<long long>(part + 1) * tiles / parts);
  return {begin, begin + 1, end - begin};
}

}  // namespace mha
