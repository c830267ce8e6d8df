// The flash-decoding kernel: one block per (partition, KV head × query-row block, sequence), or
// per (KV head × query-row block, plan work item) with a balanced split plan.
// K/V tiles stream through a cp.async multistage pipeline, Q·Kᵀ and P·V run on m16n8k16 tensor
// cores, and the FA2 online softmax (online_softmax.cuh) folds each tile into (max, sum, output).
// Two code paths: without warp split-K the warps share each tile's softmax through shared
// memory; with it each warp owns its own keys and the warps merge once, at the end. Two MMA
// orientations: the block's query heads are the MMA rows (RowsMath, decode_stages.cuh) or, with
// WM = 8, its columns (ColumnsMath, decode_stages_columns.cuh). The body reads as the algorithm;
// each stage is a function of those files.
#pragma once

#include <math.h>

#include <type_traits>

#include "cluster_combine.cuh"
#include "decode_params.cuh"
#include "decode_stages.cuh"
#include "decode_stages_columns.cuh"
#include "decode_traits.cuh"
#include "phase_clock.cuh"
#include "ptx.cuh"
#include "splitk_reduce.cuh"

namespace mha {

// Who copies which rows of a K/V tile. Each thread copies the same kLoadsPerThread chunks (rows)
// of every tile. Warp-split-K tiles run one pipeline per warp column: the kWarpsM warps that read
// the same WN keys copy only those rows of each stage and meet at their own barrier (a single
// warp: __syncwarp), so in the key loop no warp waits for warps that read other keys; with one
// barrier for the block, MQA's 8-warp blocks stalled on it (ncu: 0.85 warps per issue).
// Shared-softmax tiles copy the whole tile and meet as a block.
template <class T>
struct KvCopyShape {
  static constexpr int kCpr = T::kKvChunksPerRow;
  static constexpr bool kColumnPipelines = T::kWarpSplitK;
  static constexpr int kCopyThreads = kColumnPipelines ? T::kWarpsM * 32 : T::kThreads;
  static constexpr int kCopyRows = kColumnPipelines ? T::kWN : T::kBN;
  static constexpr int kLoadsPerThread = kCopyRows * kCpr / kCopyThreads;
  static_assert(kCopyRows * kCpr % kCopyThreads == 0,
                "a pipeline's rows must divide over its threads");
  // A thread's rows of a tile step by this.
  static constexpr int kRowsPerLoad = kCopyThreads / kCpr;
  static_assert(kCopyThreads % kCpr == 0, "each thread copies one chunk column");
  // Pages of a multiple of 16 rows (every size engines use: 16, 32, 64, 128, ...): each 16-row
  // slice of a tile lies in one page (slices start at multiples of 16), so a thread can look up
  // one page a slice, for its first row there, and step its other rows of the slice from it.
  static constexpr int kSliceRows = 16;
  static constexpr bool kSliceable =
      T::KvOperand::kHasLookup && kCopyRows % kSliceRows == 0 && kSliceRows % kRowsPerLoad == 0;
};

// One decode block. kSlicedPages: a paged cache whose pages are a multiple of 16 rows, looked up
// one page a 16-row slice (decode_kernel below takes that choice once a step).
template <class T, bool kSlicedPages>
__device__ __forceinline__ void decode_block(const DecodeParams& p, unsigned char* smem) {
  using Layout = DecodeSmemLayout<T>;
  using Copy = KvCopyShape<T>;
  constexpr int kBM = T::kBM, kBN = T::kBN, kWN = T::kWN, kStages = T::kStages;
  static_assert(!kSlicedPages || Copy::kSliceable, "only sliceable copies take sliced pages");

  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int warp_m = warp / T::kWarpsN, warp_n = warp % T::kWarpsN;
  // With a plan the KV heads run along x, so the blocks launch item by item, longest first.
  const int unit = p.work != nullptr ? blockIdx.x : blockIdx.y;
  const int kv_head = unit / T::kBlocksPerKvHead;
  const int row_block = unit % T::kBlocksPerKvHead;
  const int head0 = kv_head * T::kGroup + row_block * kBM;
  const int rows = min(kBM, T::kGroup - row_block * kBM);

  BlockWork w;
  if (!block_work<T>(p, w)) {  // past this step's plan
    phase::decode_exit(p);
    return;
  }
  // Under null/causal masks the length is read after the first tile's copy (contiguous) or page
  // look-up (paged) has gone out (below). Windows and chunks read it now: they place the first
  // tile by it.
  constexpr bool kFirstTileEarly = first_tile_before_length<T>();
  if constexpr (!kFirstTileEarly) block_length<T>(p, w, sequence_length(p, w));

  // The K/V copy (KvCopyShape: who copies which rows). For a paged cache the pages of a tile are
  // looked up ahead of its issue: the prologue's all at once (sliced pages, read_ahead) or stage
  // by stage, and with pages not a multiple of 16 the loop's one tile ahead into registers
  // (look_up_tile); in the loop, sliced pages' entries travel through the pipeline
  // (fetch_entries). Looked up at issue time, paged steps took 1.2-1.4x the
  // contiguous time (docs/performance.md). Keys past the sequence are zero-filled: their V rows
  // contribute 0 · 0, never NaN. (Lambdas over the kernel's own registers: as a struct holding a
  // reference to the parameters, the paged instances compiled to different address arithmetic.)
  using Elem = typename T::MmaElem;  // what the tensor cores read
  using KvElem = typename T::KvElem;
  using Kv = typename T::KvOperand;
  constexpr int kCpr = Copy::kCpr;
  constexpr int kChunkElems = 16 / T::kKvElemBytes;
  constexpr bool kColumnPipelines = Copy::kColumnPipelines;
  constexpr int kCopyThreads = Copy::kCopyThreads, kCopyRows = Copy::kCopyRows;
  constexpr int kLoadsPerThread = Copy::kLoadsPerThread, kRowsPerLoad = Copy::kRowsPerLoad;
  static_assert(T::kWarpsN < 16, "one named barrier per warp column (ids 1..15)");
  const int copy_tid = kColumnPipelines ? warp_m * 32 + lane : tid;
  const int copy_row0 = kColumnPipelines ? warp_n * kWN : 0;
  auto wait_for_pipeline = [&]() {
    if constexpr (!kColumnPipelines)
      __syncthreads();
    else if constexpr (T::kWarpsM == 1)
      __syncwarp();
    else
      ptx::named_barrier(1 + warp_n, kCopyThreads);
  };
  const KvElem* k_base = static_cast<const KvElem*>(p.k_cache);
  const KvElem* v_base = static_cast<const KvElem*>(p.v_cache);
  auto k_stage = [&](int s) { return smem + Layout::kPipeline + s * T::kStageBytes; };
  auto v_stage = [&](int s) {
    return smem + Layout::kPipeline + s * T::kStageBytes + T::kKvTileBytes;
  };
  // Where chunk c of row r lands in a stage: swizzled for ldmatrix; fp8 tiles read only by
  // convert_tile in plain row order.
  auto stage_offset = [](int r, int c) {
    return T::kKvFp8 ? (r * kCpr + c) * 16 : swizzled<kCpr>(r, c) * T::kKvElemBytes;
  };
  // Paged caches: each row's page (a table read in flight a tile ahead) and its byte offset
  // within the page, split from the key once here. Keys past the sequence look up its last key, a
  // valid entry, so no branch guards the read or the address (their copies are zero-filled all
  // the same). A row's byte offset is page · page_bytes + in-page offset, one mul.wide and one
  // add: the thread's KV head and chunk are in the in-page offset from the look-up, and the
  // strides are computed once and held opaque (every one fits an int: a page's bytes). Written
  // as page_row_offset in elements, ptxas re-derived the KV head from blockIdx, reloaded the
  // parameters and multiplied 64 by 64 bits for every row: 184 of the BM-16 tile's 557
  // instructions a tile against 373 contiguous (SASS).
  int next_pages[Kv::kHasLookup ? kLoadsPerThread : 1];
  int next_in_page_bytes[Kv::kHasLookup ? kLoadsPerThread : 1];
  int page_bytes = 0, page_row_bytes = 0, page_thread_bytes = 0;
  if constexpr (Kv::kHasLookup) {
    page_bytes = ptx::opaque(Kv::page_stride(p, T::kDepth) * T::kKvElemBytes);
    page_row_bytes = ptx::opaque(Kv::row_stride(p, T::kDepth) * T::kKvElemBytes);
    page_thread_bytes = ptx::opaque(
        (Kv::head_offset(p, kv_head, T::kDepth) + copy_tid % kCpr * kChunkElems) * T::kKvElemBytes);
  }
  // Sliced pages (KvCopyShape): warp split-K tiles (16-row pipelines) read one table entry a tile
  // instead of one a row: the per-row look-ups were a third of a paged tile's instructions (ncu:
  // 315 a warp-tile against 210 contiguous), and at one warp a scheduler each one is time. Other
  // page sizes keep a look-up a row. (Sliced: one paged block streaming 8,192 keys 95 -> 73 us,
  // contiguous 63; warp split-K tiles 3-8% faster over all their paged points.)
  constexpr int kSliceRows = Copy::kSliceRows;
  constexpr bool kSliceable = Copy::kSliceable;
  constexpr int kSlices = kSliceable ? kCopyRows / kSliceRows : 1;
  constexpr int kRowsPerSlice =
      kSliceable ? kSliceRows / kRowsPerLoad : 1;  // a thread's, in one slice
  constexpr bool sliced = kSlicedPages;
  int slice_step_bytes = 0;  // from a thread's row in a slice to its next
  if constexpr (kSliceable) slice_step_bytes = ptx::opaque(kRowsPerLoad * page_row_bytes);
  // A thread's first key of slice g, and a key's byte offset within its page (this thread's
  // KV head and chunk included).
  auto slice_key = [&](int tile, int g) {
    return tile * kBN + copy_row0 + g * kSliceRows + copy_tid / kCpr;
  };
  auto in_page_bytes = [&](int key) {
    if constexpr (Kv::kHasLookup) return Kv::in_page(p, key) * page_row_bytes + page_thread_bytes;
    return 0;
  };
  // Keys from key_end on look up key_end - 1 (the length, or for the early first tile the table's
  // row, key_cap: entries past the length may be unset, drop_entries_past_length).
  auto read_slices = [&](int tile, int key_end, int* pages, int* in_page) {
#pragma unroll
    for (int g = 0; g < kSlices; ++g) {
      const int key = min(slice_key(tile, g), key_end - 1);
      pages[g] = Kv::lookup(p, w.b, key);
      in_page[g] = in_page_bytes(key);
    }
  };
  auto look_up_tile = [&](int tile, int key_end) {
    if constexpr (Kv::kHasLookup) {
      if constexpr (sliced) {
        read_slices(tile, key_end, next_pages, next_in_page_bytes);
      } else {
#pragma unroll
        for (int j = 0; j < kLoadsPerThread; ++j) {
          const int row = copy_row0 + (copy_tid + j * kCopyThreads) / kCpr;
          const int key = min(tile * kBN + row, key_end - 1);
          next_pages[j] = Kv::lookup(p, w.b, key);
          next_in_page_bytes[j] = in_page_bytes(key);
        }
      }
    }
  };
  // Sliced pages in the key loop: a tile's table entries travel through the pipeline. Thread g of
  // each pipeline copies slice g's entry (4-byte cp.async) into its stage's slot, in the commit
  // group of the tile S - 1 before it; when that tile has landed (the loop's wait and barrier) so
  // has the entry, and the tile's issue reads it from shared memory. Looked up into a register
  // one tile ahead, the entry came back after its use: a single paged block streaming 8,192 keys
  // spent 12% of its stall samples waiting on it (long scoreboard at the page's multiply; ncu).
  // That wait is gone (paged tiles 2-6% faster over their points), though the slot and fetch add
  // about 24 instructions a warp-tile. One int a 16-row slice a stage.
  constexpr int kEntriesPerStage = kBN / kSliceRows;
  static_assert(!kSliceable || kStages * kEntriesPerStage * 4 <= T::kPageEntryBytes,
                "the entry slots must fit DecodeTraits::kPageEntryBytes");
  // Slice g's entry in stage `slot`: this pipeline's slices follow those of the pipelines before.
  auto entry_slot = [&](int slot, int g) {
    int* slots = reinterpret_cast<int*>(smem + Layout::kPageEntries);
    return slots + slot * kEntriesPerStage + copy_row0 / kSliceRows + g;
  };
  auto fetch_entries = [&](int tile, int slot) {
    if constexpr (sliced) {
      if (copy_tid < kSlices) {
        const int key = min(tile * kBN + copy_row0 + copy_tid * kSliceRows, w.n - 1);
        ptx::cp_async_4(entry_slot(slot, copy_tid), Kv::table_entry(p, w.b, key));
      }
    }
  };
  // Rows past the length get an in-page offset past it too: copy_row drops them.
  auto take_entries = [&](int tile, int slot) {
    if constexpr (sliced) {
#pragma unroll
      for (int g = 0; g < kSlices; ++g) {
        next_pages[g] = *entry_slot(slot, g);
        next_in_page_bytes[g] = in_page_bytes(slice_key(tile, g));
      }
    }
  };
  // Contiguous caches: thread copy_tid copies chunk copy_tid % kCpr of rows copy_row0 +
  // copy_tid / kCpr + j · kRowsPerLoad of every tile. Its K and V source pointers start at the
  // block's first tile and advance one tile per issue (a 64-bit add each), and its rows are those
  // pointers plus j row steps. The steps are computed once and held opaque (ptx::opaque):
  // otherwise ptxas may recompute them from blockIdx and the parameters in every copy, as it did in
  // the 128-register BM-8 instances (about 50 integer instructions a tile). Computed from the tile
  // index in every issue, the sources cost MQA's BM-16 tile about 40 of its 228 instructions a
  // tile (SASS: a 64-bit multiply and a select per row).
  // A block's first tile and its run are apart (block_work): the sources are placed at each.
  const KvElem* k_next = k_base;
  const KvElem* v_next = v_base;
  long long load_stride = 0, tile_stride = 0, thread_row0 = 0;
  if constexpr (!Kv::kHasLookup) {
    load_stride = ptx::opaque(kRowsPerLoad * Kv::key_stride(p, T::kDepth));
    tile_stride = ptx::opaque(kBN * Kv::key_stride(p, T::kDepth));
    thread_row0 =
        ptx::opaque(Kv::row_offset(p, w.b, copy_row0 + copy_tid / kCpr, kv_head, T::kDepth) +
                    copy_tid % kCpr * kChunkElems);
  }
  auto point_sources_at = [&](int tile) {
    if constexpr (!Kv::kHasLookup) {
      k_next = k_base + thread_row0 + static_cast<long long>(tile) * tile_stride;
      v_next = v_base + thread_row0 + static_cast<long long>(tile) * tile_stride;
    }
  };
  // fp8 tiles that the columns math reads with ldmatrix are swizzled too (fp8_swizzled_bytes).
  // A thread's rows step by kRowsPerLoad: a multiple of the swizzle's 8-row period, or half a
  // period (a warp column's 32 copiers at d128: 4 rows), which flips the same chunk bit in every
  // row. So its offsets are one base (or two, alternating with j) plus j row steps. The bases
  // pass through an identity shuffle, which ptxas does not recompute: it sees through
  // ptx::opaque's mov (a PTX instruction) and, with it, recomputed the swizzle from the thread
  // index in every tile (12 instructions, SASS).
  constexpr bool kFp8CopyStepsRows = T::kFp8InRegisters && kRowsPerLoad % 4 == 0;
  constexpr int kFp8RowStepBytes = kRowsPerLoad * kCpr * 16;
  int fp8_copy_offset[2] = {0, 0};
  if constexpr (kFp8CopyStepsRows) {
    const int r0 = copy_row0 + copy_tid / kCpr, c0 = copy_tid % kCpr;
    fp8_copy_offset[0] = __shfl_sync(0xffffffffu, fp8_swizzled_bytes<kCpr>(r0, c0), lane);
    fp8_copy_offset[1] = __shfl_sync(
        0xffffffffu, fp8_swizzled_bytes<kCpr>(r0 + kRowsPerLoad, c0) - kFp8RowStepBytes, lane);
  }
  auto fp8_stage_offset = [&](int j, int r, int c) {
    if constexpr (kFp8CopyStepsRows)
      return fp8_copy_offset[kRowsPerLoad % 8 == 0 ? 0 : j & 1] + j * kFp8RowStepBytes;
    else
      return fp8_swizzled_bytes<kCpr>(r, c);
  };
  // Issues one tile's copies of the keys below `limit` (the length; for the early first tile, the
  // contiguous slot's max_keys). Every tile but a sequence's last lies wholly below it (kChecked
  // false): its copies need no per-row test. In the last, rows past it read the cache's first
  // row with a source size of 0 (zero-filled): their V rows contribute 0 · 0, never NaN. Tiles
  // are issued in order, so the contiguous sources advance here.
  auto issue_tile = [&](int tile, int stage, int limit, auto checked) {
    constexpr bool kChecked = decltype(checked)::value;
    unsigned char* k_s = k_stage(stage);
    unsigned char* v_s = v_stage(stage);
    // Row j's copies, from its byte offset in the cache (paged) or its source pointers.
    auto copy_row = [&](int j, long long paged_off) {
      const int i = copy_tid + j * kCopyThreads;
      const int r = copy_row0 + i / kCpr, c = i % kCpr;
      const bool in_range = !kChecked || tile * kBN + r < limit;
      const void* k_src;
      const void* v_src;
      if constexpr (Kv::kHasLookup) {
        // A sliced row past the length may step past its clamped look-up's page.
        const long long off = in_range ? paged_off : 0;
        k_src = reinterpret_cast<const unsigned char*>(k_base) + off;
        v_src = reinterpret_cast<const unsigned char*>(v_base) + off;
      } else {
        k_src = in_range ? k_next + j * load_stride : k_base;
        v_src = in_range ? v_next + j * load_stride : v_base;
      }
      const int at = T::kFp8InRegisters ? fp8_stage_offset(j, r, c) : stage_offset(r, c);
      ptx::cp_async_16(k_s + at, k_src, in_range ? 16 : 0);
      ptx::cp_async_16(v_s + at, v_src, in_range ? 16 : 0);
    };
    if constexpr (!Kv::kHasLookup) {
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j) copy_row(j, 0);
    } else if constexpr (sliced) {
#pragma unroll
      for (int g = 0; g < kSlices; ++g) {
        const long long slice_off =
            ptx::mul_wide(next_pages[g], page_bytes) + next_in_page_bytes[g];
#pragma unroll
        for (int jj = 0; jj < kRowsPerSlice; ++jj)
          copy_row(g * kRowsPerSlice + jj, slice_off + jj * slice_step_bytes);
      }
    } else {
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j)
        copy_row(j, ptx::mul_wide(next_pages[j], page_bytes) + next_in_page_bytes[j]);
    }
    if constexpr (!Kv::kHasLookup) {
      k_next += tile_stride;
      v_next += tile_stride;
    }
  };
  auto issue = [&](int tile, int stage) {
    if ((tile + 1) * kBN <= w.n)
      issue_tile(tile, stage, w.n, std::false_type{});
    else
      issue_tile(tile, stage, w.n, std::true_type{});
  };
  auto issue_checked = [&](int tile, int stage, int limit) {
    issue_tile(tile, stage, limit, std::true_type{});
  };

  // Start the pipeline first so the K/V loads overlap the Q load. On the early path (fixed
  // partitions, a mask visible from key 0) a block's first tile is known before its length
  // (block_work). A contiguous cache copies it at once: every row of it lies within the sequence's
  // max_keys slot. A paged cache looks its pages up at once, clamped to the table's row, and
  // copies once the length is in. The length's and Q's loads go out next. Contiguous: the first
  // copy, the Q rows and the length then travel in one round trip, where the length was a
  // dependent load before the first copy of every step (0.1-0.2 us on short steps; with Q staged
  // after the length nothing was gained); paged: the look-up, the length and Q travel together,
  // ahead of the first copies (Q's load sent after them waited behind every block's first tile).
  // Stage s holds the block's tile s; other paths (plans, windows, a paged batch whose table has
  // no column) issue the prologue once the length is known.
  int key_cap = 0;  // paged: the keys a table row can address
  if constexpr (Kv::kHasLookup) key_cap = p.max_pages_per_seq * p.page_size;
  const bool first_tile_early =
      kFirstTileEarly && p.work == nullptr && (!Kv::kHasLookup || key_cap > 0);
  auto count_tiles = [&]() {
    return T::kFault == Fault::kDropLastTile && w.num_tiles > 1 ? w.num_tiles - 1 : w.num_tiles;
  };
  // Sliced pages: the prologue's look-ups all go out before its first issue (read_ahead), in
  // one round trip. Looked up stage by stage, each stage's copy waited for its own look-up: with
  // three stages the paged ramp held one more round trip than the first look-up's own (mha-tune
  // phases: group 16's first tile landed 1.9-2.8 us after the contiguous one's at 8,192 keys and
  // P 8-32). With Q's load ahead of the first copies too (below) and the kernel split by page
  // slicing (decode_kernel), the three together took paged b1 8k 8% less time and b8 512 11% less.
  int ahead_pages[kStages - 1][kSlices];
  int ahead_in_page_bytes[kStages - 1][kSlices];
  auto read_ahead = [&](int from_stage, int known_tiles) {
    if constexpr (sliced) {
#pragma unroll
      for (int s = 0; s < kStages - 1; ++s)
        if (s >= from_stage && s < known_tiles)
          read_slices(block_tile<T>(p, w, s), w.n, ahead_pages[s], ahead_in_page_bytes[s]);
    }
  };
  // Issues the prologue's stages [from_stage, to_stage).
  auto issue_prologue = [&](int from_stage, int to_stage, int known_tiles) {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < from_stage || s >= to_stage) continue;
      if (s < known_tiles) {
        if constexpr (sliced) {
          if (s > 0 || !first_tile_early) {
#pragma unroll
            for (int g = 0; g < kSlices; ++g) {
              next_pages[g] = ahead_pages[s][g];
              next_in_page_bytes[g] = ahead_in_page_bytes[s][g];
            }
          }
        } else if (s > 0 || !(Kv::kHasLookup && first_tile_early)) {
          look_up_tile(block_tile<T>(p, w, s), w.n);
        }
        if (s == 0) point_sources_at(w.first_tile);
        // The early path's prologue tests every row (a few instructions, once a step): with both
        // forms inlined at each of its issue sites its code doubled (SASS).
        if constexpr (kFirstTileEarly)
          issue_checked(block_tile<T>(p, w, s), s, w.n);
        else
          issue(block_tile<T>(p, w, s), s);
        if (s == 0)
          point_sources_at(block_run_tile<T>(w, 1));  // the run may lie apart from the first tile
      }
      if (sliced && s + kStages - 1 < known_tiles)
        fetch_entries(block_run_tile<T>(w, s + kStages - 1), s);
      ptx::cp_async_commit();
    }
  };
  // The early look-up read the table up to its row's end: entries past the length may be unset
  // (any value), so rows past it take page 0, a valid address for their zero-filled copies. With
  // slices, entry g serves slice g, whose rows lie at or past row g: dropped by row g's key, it
  // holds no row below the length. A checked copy also reads row 0 for every row past the length
  // (copy_row), which alone suffices; this stays as measured until a measured change removes it.
  auto drop_entries_past_length = [&]() {
    if constexpr (Kv::kHasLookup) {
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j)
        if (w.first_tile * kBN + copy_row0 + (copy_tid + j * kCopyThreads) / kCpr >= w.n)
          next_pages[j] = 0;
    }
  };
  if (first_tile_early) {
    if constexpr (Kv::kHasLookup) {
      look_up_tile(w.first_tile, key_cap);
    } else {
      point_sources_at(w.first_tile);
      issue_checked(w.first_tile, 0, p.max_keys);
      ptx::cp_async_commit();
    }
  } else {
    if constexpr (kFirstTileEarly) block_length<T>(p, w, sequence_length(p, w));  // (plans: known)
    read_ahead(0, count_tiles());
    issue_prologue(0, kStages - 1, count_tiles());
  }
  // The length and Q's rows go out next (the Q rows into registers; shared memory takes them in
  // math.start). A paged early path copies its first tile once the length is in; with sliced
  // pages its later prologue tiles follow Q into shared memory, so that their look-ups (read_ahead,
  // sent before the first tile's copies) have time to return; per-row look-ups (one tile's in
  // registers at a time) copy every prologue tile first.
  const int seq_len = kFirstTileEarly ? sequence_length(p, w) : w.n;
  const QChunks<T> q = load_q<T>(p, w.b, head0, rows, tid);
  constexpr int kStagesBeforeQ = Kv::kHasLookup && !sliced ? kStages - 1 : 1;
  if constexpr (kFirstTileEarly && Kv::kHasLookup) {
    if (first_tile_early) {
      block_length<T>(p, w, seq_len);
      drop_entries_past_length();
      read_ahead(1, count_tiles());
      issue_prologue(0, kStagesBeforeQ, count_tiles());
    }
  }
  // Heads on the MMA rows (decode_stages.cuh) or, for WM = 8, on its columns
  // (decode_stages_columns.cuh): the Q fragments and the running softmax state.
  using Math = std::conditional_t<T::kHeadsAsColumns, ColumnsMath<T>, RowsMath<T>>;
  Math math;
  math.start(q, smem, tid, warp_m, lane);
  const ScoreScaling scaling = score_scaling<T>(p, kv_head);
  if constexpr (kFirstTileEarly) {
    if (first_tile_early) {
      if constexpr (!Kv::kHasLookup) {
        block_length<T>(p, w, seq_len);
        point_sources_at(block_run_tile<T>(w, 1));
      }
      issue_prologue(kStagesBeforeQ, kStages - 1, count_tiles());
    }
  }
  const int num_tiles = count_tiles();
  if (!sliced && kStages - 1 < num_tiles) look_up_tile(block_run_tile<T>(w, kStages - 1), w.n);
  // The early contiguous copy read the rows past the length too (stale cache rows, perhaps not
  // finite: the tests poison them with NaN). Only the sequence's last tile has such rows, and it
  // is a first tile only when the sequence has at most P tiles: then, once it has landed, each
  // thread zeroes the chunks it copied there, so the stage holds what a checked copy would have
  // left.
  if constexpr (kFirstTileEarly && !Kv::kHasLookup) {
    if (first_tile_early && w.num_tiles > 0 && (w.first_tile + 1) * kBN > w.n) {
      ptx::cp_async_wait<kStages - 2>();  // this thread's copies of stage 0 have landed
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j) {
        const int i = copy_tid + j * kCopyThreads;
        const int r = copy_row0 + i / kCpr, c = i % kCpr;
        if (w.first_tile * kBN + r >= w.n) {
          const int at = T::kFp8InRegisters ? fp8_stage_offset(j, r, c) : stage_offset(r, c);
          ptx::st_shared_zero_16(k_stage(0) + at);
          ptx::st_shared_zero_16(v_stage(0) + at);
        }
      }
    }
  }

  Elem* k_converted = reinterpret_cast<Elem*>(smem + Layout::kConvert);
  Elem* v_converted = k_converted + kBN * T::kDepth;
  const int warp_key0 = warp_n * kWN;  // this warp's first key within a tile

  // The stage a tile is read from and the one the tile kStages - 1 ahead is copied into, each
  // advanced by one (a modulo by 3 was a multiply and three more instructions a tile).
  int read_stage = 0, write_stage = kStages - 1;
  auto next_stage = [](int stage) { return stage + 1 == kStages ? 0 : stage + 1; };
  for (int it = 0; it < num_tiles; ++it) {
    ptx::cp_async_wait<kStages - 2>();
    wait_for_pipeline();  // tile `it` has landed for every copier; stage (it-1) is free to refill
    if (it == 0) phase::decode_cycle(p, phase::kFirstTileCycle);
    if (it + kStages - 1 < num_tiles) {
      const int tile = block_run_tile<T>(w, it + kStages - 1);
      // Sliced pages: the entries came with tile `it`, in its stage's slot.
      if constexpr (sliced) take_entries(tile, read_stage);
      issue(tile, write_stage);
      if constexpr (sliced) {
        if (it + 2 * kStages - 2 < num_tiles)
          fetch_entries(block_run_tile<T>(w, it + 2 * kStages - 2), write_stage);
      } else if (it + kStages < num_tiles) {
        look_up_tile(block_run_tile<T>(w, it + kStages), w.n);
      }
    }
    ptx::cp_async_commit();
    write_stage = next_stage(write_stage);

    const Elem* k_s = reinterpret_cast<const Elem*>(k_stage(read_stage));
    const Elem* v_s = reinterpret_cast<const Elem*>(v_stage(read_stage));
    if constexpr (T::kKvFp8 && !T::kFp8InRegisters) {
      // The previous tile's readers passed the barrier above, so the fp16 tiles are free.
      convert_tile<T>(k_stage(read_stage), v_stage(read_stage), k_converted, v_converted, warp_key0,
                      tid);
      k_s = k_converted;
      v_s = v_converted;
    }
    read_stage = next_stage(read_stage);
    const int tile_key0 = block_tile<T>(p, w, it) * kBN;

    math.fold(smem, k_s, v_s, tile_key0 + warp_key0, warp_key0, w, scaling, warp_m, warp_n, lane);
  }

  phase::decode_cycle(p, phase::kLoopEndCycle);
  // The key loop is over: a programmatically launched reduce may start its launch now (it waits
  // for this whole grid to finish before it reads a partial).
  ptx::launch_dependents();
  if constexpr (T::kKvFp8) math.dequantise_output(p.v_scale[kv_head]);  // V's dequantisation

  // Epilogue: drain the pipeline, gather (max, sum, unnormalised output) per row in shared
  // memory, then merge and write.
  ptx::cp_async_wait<0>();
  __syncthreads();
  const MergeArea<T> merge(smem);
  math.to_merge_area(merge, warp_m, warp_n, lane);
  __syncthreads();
  phase::decode_cycle(p, phase::kMergedCycle);
  // A cluster launch (the launcher sets cluster_combine only for one: 2..8 fixed partitions)
  // combines the partitions through distributed shared memory and writes the output.
  if (p.cluster_combine) {
    cluster_combine_rows<T>(p, merge, w, head0, rows, tid);
    phase::decode_exit(p);
    return;
  }
  write_rows<T>(p, merge, w, head0, rows, tid);

  // Fused reduce: the last partition of these rows to finish combines all of them, which saves
  // the second launch. The barrier gathers the block's partial writes and one thread publishes
  // them with a gpu-scope acq_rel atomic (cumulative through the barrier), so the block pays
  // one fence, not one per thread: a fence in every thread cost +2.5 us at 16 partitions
  // (docs/performance.md).
  if (w.chunks > 1 && p.split_counters != nullptr) {
    unsigned* counter = p.split_counters + static_cast<long long>(w.b) * gridDim.y + blockIdx.y;
    // __syncthreads_or broadcasts thread 0's verdict without static shared memory (which would
    // add to the dynamic size the generator checked against the device limit).
    const bool is_last = __syncthreads_or(tid == 0 && ptx::atomic_add_acq_rel_gpu(counter, 1u) ==
                                                          static_cast<unsigned>(w.chunks - 1));
    if (!is_last) {
      phase::decode_exit(p);
      return;
    }
    // The drained pipeline buffers hold the combine's scratch; the launcher falls back to the
    // separate reduce when they are too small for this partition count.
    fused_combine_rows<typename T::Out, T::kHasSink, T::kFault>(
        p, w.b, head0, rows, T::kDepth, reinterpret_cast<float*>(smem + Layout::kPipeline));
    if (tid == 0) *counter = 0;  // ready for the next step (graph replays reuse the counters)
  }
  phase::decode_exit(p);
}

// The kernel takes the page-slicing choice (a step's page size) once, so each choice compiles to
// its own code, with no test of it in the key loop. Taken at every look-up and issue, both paths
// sat interleaved in every paged loop (8,360 SASS instructions against 4,984 contiguous, group 16
// BM 16 BN 128). Split, one paged block streaming 8,192 keys spent 7-23% less time in its key loop
// (mha-tune phases: group 16 BM 16 BN 128 52.0 -> 48.6 us, MQA 41.3 -> 31.7, 32/8 BM 8 72.7 ->
// 64.2), and paged tiles ran 2-3% faster over all their points. (Under ncu, which flushes the
// caches, half the paged kernel's stall samples were `no_instruction` before the split and after
// it: 695 of 1,416 before, 809 of 1,514 after; contiguous 61 of 772.)
template <class T>
__global__ void __launch_bounds__(T::kThreads) decode_kernel(const DecodeParams p) {
  extern __shared__ __align__(128) unsigned char smem[];
  phase::decode_start(p);  // the phase stamps compile to nothing outside `phases` builds
  if constexpr (KvCopyShape<T>::kSliceable) {
    if (p.page_size % KvCopyShape<T>::kSliceRows == 0) {
      decode_block<T, true>(p, smem);
      return;
    }
  }
  decode_block<T, false>(p, smem);
}

}  // namespace mha
