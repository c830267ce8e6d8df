// The balanced split-KV plan: the chunk size search, the work list and the partial layout.
#include "api/split_plan.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <stdexcept>

namespace mha {

namespace {

int ceil_div(long long a, long long b) { return static_cast<int>((a + b - 1) / b); }

int visible_tiles(const VisibleRange& r, int tile_keys) {
  if (r.end <= r.begin) return 0;
  return ceil_div(r.end, tile_keys) - r.begin / tile_keys;
}

// Block slots the plan assumes run at once, and the fixed cost of one block (pipeline fill,
// epilogue, partial write) in keys' worth of streaming: an estimate of about 2 µs, the time one
// SM's share of the H200's ~4.5 TB/s (34 GB/s) takes for 128 keys of one d128 KV head (64 KB).
int slots(const SplitPlanTarget& t, const SplitPlanKnobs& k) {
  return std::max(1, k.blocks_per_sm * t.sm_count);
}
constexpr int kItemOverheadKeys = 128;

// The makespan of the step in tiles if the blocks run in the launch order (longest items first,
// every KV head of an item together) on `slots` slots, each going to the slot that frees first:
// the block scheduler's list scheduling.
double simulated_makespan(const std::vector<int>& tiles, int chunk, int blocks_per_item,
                          int slot_count, double overhead_tiles) {
  std::vector<double> items;
  for (int t : tiles) {
    const int chunks = std::max(1, ceil_div(t, chunk));
    for (int c = 0; c < chunks; ++c)
      items.push_back(double((c + 1) * static_cast<long long>(t) / chunks -
                             c * static_cast<long long>(t) / chunks) +
                      overhead_tiles);
  }
  std::sort(items.begin(), items.end(), std::greater<double>());
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (int s = 0; s < slot_count; ++s) free_at.push(0.0);
  double makespan = 0;
  for (double len : items)
    for (int u = 0; u < blocks_per_item; ++u) {
      const double end = free_at.top() + len;
      free_at.pop();
      free_at.push(end);
      makespan = std::max(makespan, end);
    }
  return makespan;
}

// Items beyond one per sequence that a plan may add: two waves' worth of blocks. This bounds the
// work list whatever the lengths (the device buffers' capacity).
int max_extra_items(const SplitPlanTarget& t, const SplitPlanKnobs& k) {
  return std::max(1, 2 * slots(t, k) / std::max(1, t.blocks_per_item));
}

long long items_at(const std::vector<int>& tiles, int chunk) {
  long long items = 0;
  for (int t : tiles) items += std::max(1, ceil_div(t, chunk));
  return items;
}

// The chunk size whose simulated step is shortest; candidates cut the longest sequence into
// 1, 2, 3, ... chunks (the sizes at which its chunk count changes), down to the minimum chunk and
// while the items fit the capacity. Ties go to the larger chunk: fewer partials to combine.
int choose_chunk_tiles(const std::vector<int>& tiles, int longest, int min_tiles,
                       const SplitPlanTarget& t, const SplitPlanKnobs& k) {
  if (longest <= min_tiles) return min_tiles;
  const int slot_count = slots(t, k);
  const int blocks_per_item = std::max(1, t.blocks_per_item);
  const double overhead = double(kItemOverheadKeys) / std::max(1, t.tile_keys);
  const int max_chunks = std::min(ceil_div(longest, min_tiles), max_extra_items(t, k) + 1);
  const long long max_items = static_cast<long long>(tiles.size()) + max_extra_items(t, k);
  int best = longest;
  double best_time = simulated_makespan(tiles, longest, blocks_per_item, slot_count, overhead);
  int last = longest;
  for (int chunks = 2; chunks <= max_chunks; ++chunks) {
    const int chunk = std::max(min_tiles, ceil_div(longest, chunks));
    if (chunk == last) continue;
    last = chunk;
    if (items_at(tiles, chunk) > max_items) break;  // smaller chunks only add items
    const double time = simulated_makespan(tiles, chunk, blocks_per_item, slot_count, overhead);
    if (time < best_time * (1 - 1e-9)) {
      best = chunk;
      best_time = time;
    }
  }
  return best;
}

}  // namespace

int split_plan_capacity(int batch, const SplitPlanTarget& target, const SplitPlanKnobs& knobs) {
  return batch + max_extra_items(target, knobs);
}

VisibleRange visible_range(int length, MaskKind mask, int window, int chunk, int q_len) {
  DecodeParams args;
  args.window = window;
  args.chunk = chunk;
  args.q_len = q_len;
  int begin = 0;  // a window or chunk of 0 keys is none: every key visible
  if (mask == MaskKind::kWindow && window > 0)
    begin = visible_begin<SlidingWindowMask>(length, args);
  if (mask == MaskKind::kChunked && chunk > 0) begin = visible_begin<ChunkedMask>(length, args);
  return {begin, length};
}

SplitPlan build_split_plan(const std::vector<VisibleRange>& visible, const SplitPlanTarget& target,
                           const SplitPlanKnobs& knobs) {
  const int tile_keys = std::max(1, target.tile_keys);
  std::vector<int> tiles(visible.size());
  int longest = 0;
  for (size_t b = 0; b < visible.size(); ++b) {
    tiles[b] = visible_tiles(visible[b], tile_keys);
    longest = std::max(longest, tiles[b]);
  }
  const int min_tiles = std::max(1, ceil_div(knobs.min_chunk_keys, tile_keys));
  const int chunk_tiles = choose_chunk_tiles(tiles, longest, min_tiles, target, knobs);
  SplitPlan plan;
  plan.chunk_tiles = chunk_tiles;
  plan.seqs.resize(visible.size());
  for (size_t b = 0; b < visible.size(); ++b) {
    const int chunks = std::max(1, ceil_div(tiles[b], plan.chunk_tiles));
    const int tile_lo = visible[b].end > visible[b].begin ? visible[b].begin / tile_keys : 0;
    const int first_partial = chunks > 1 ? plan.partial_rows_per_head : 0;
    plan.seqs[b] = {first_partial, chunks};
    if (chunks > 1) plan.partial_rows_per_head += chunks;
    plan.max_chunks = std::max(plan.max_chunks, chunks);
    // Even cuts: chunk sizes differ by at most one tile.
    for (int c = 0; c < chunks; ++c) {
      WorkItem item;
      item.seq = static_cast<int>(b);
      item.tile_begin = tile_lo + static_cast<int>(static_cast<long long>(c) * tiles[b] / chunks);
      item.tile_end = tile_lo + static_cast<int>(static_cast<long long>(c + 1) * tiles[b] / chunks);
      item.chunk = c;
      item.chunks = chunks;
      item.seq_len = visible[b].end;
      item.first_partial = first_partial;
      plan.work.push_back(item);
    }
  }
  // Longest first: the block scheduler starts them first and the short ones fill the tail.
  std::stable_sort(plan.work.begin(), plan.work.end(), [](const WorkItem& a, const WorkItem& b) {
    return a.tile_end - a.tile_begin > b.tile_end - b.tile_begin;
  });
  return plan;
}

}  // namespace mha
