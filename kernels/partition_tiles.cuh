// Which of a sequence's visible key tiles a fixed partition reads (docs/design.md, Split-K): its
// first tile is visible tile `part`, known before the sequence's length, and its others are a
// contiguous 1/P share of tiles P .. T - 1, so a partition still streams one run. Host and device
// share this one formula (the kernel's block_length, tests/test_partition_tiles.cpp).
#pragma once

#include <cuda_runtime.h>  // __host__ __device__ for host compilers

namespace mha {

// Tiles relative to the first visible one: `first` (when count > 0), then run_begin,
// run_begin + 1, ... (count - 1 tiles).
struct PartitionTiles {
  int first, run_begin, count;
};

__host__ __device__ inline PartitionTiles partition_tiles(int tiles, int parts, int part) {
  const long long rest = tiles > parts ? tiles - parts : 0;  // the tiles after the P first ones
  const int run_begin = parts + static_cast<int>(part * rest / parts);
  const int run_end = parts + static_cast<int>((part + 1) * rest / parts);
  return {part, run_begin, (part < tiles ? 1 : 0) + run_end - run_begin};
}

}  // namespace mha
