// The K/V copy path of one decode block: key tiles from the cache into a cp.async multistage
// pipeline of shared-memory stages, for a contiguous or a paged cache (page look-ups one a row,
// or one a 16-row slice, KvCopyShape), with the block's first tile copied or looked up before
// its sequence's length is known where the mask allows it (first_tile_before_length).
//   KvCopyShape   who copies which rows of a tile
//   KvPipeline    the pipeline's state and its steps, in the order decode_block runs them:
//                 prologue_start, prologue_with_length, prologue_after_q, prologue_end, then
//                 per tile wait_for_tile, refill and landed_tile, and drain at the end
// Keys past the sequence are zero-filled: their V rows contribute 0 · 0, never NaN.
#pragma once

#include <type_traits>

#include "kernels/decode_params.cuh"
#include "kernels/decode_stages.cuh"
#include "kernels/decode_traits.cuh"
#include "kernels/ptx.cuh"

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

// The K/V pipeline of one decode block. kSlicedPages: a paged cache whose pages are a multiple
// of 16 rows, looked up one page a 16-row slice (decode_kernel takes that choice once a step).
// For a paged cache the pages of a tile are looked up ahead of its issue: the prologue's all at
// once (sliced pages, read_ahead) or stage by stage, and with pages not a multiple of 16 the
// loop's one tile ahead into registers (look_up_tile); in the loop, sliced pages' entries travel
// through the pipeline (fetch_entries). Looked up at issue time, paged steps took 1.2-1.4x the
// contiguous time (docs/performance.md).
// Every member is a value or a pointer, every step __forceinline__, and the parameters and the
// block's work come in as arguments: as a struct holding a reference to the parameters, the
// paged instances compiled to different address arithmetic (SASS).
template <class T, bool kSlicedPages>
class KvPipeline {
  using Copy = KvCopyShape<T>;
  using Layout = DecodeSmemLayout<T>;
  using Elem = typename T::MmaElem;  // what the tensor cores read
  using KvElem = typename T::KvElem;
  using Kv = typename T::KvOperand;
  static constexpr int kBN = T::kBN, kWN = T::kWN, kStages = T::kStages;
  static constexpr int kCpr = Copy::kCpr;
  static constexpr int kChunkElems = 16 / T::kKvElemBytes;
  static constexpr bool kColumnPipelines = Copy::kColumnPipelines;
  static constexpr int kCopyThreads = Copy::kCopyThreads, kCopyRows = Copy::kCopyRows;
  static constexpr int kLoadsPerThread = Copy::kLoadsPerThread;
  static constexpr int kRowsPerLoad = Copy::kRowsPerLoad;
  static_assert(T::kWarpsN < 16, "one named barrier per warp column (ids 1..15)");
  static_assert(!kSlicedPages || Copy::kSliceable, "only sliceable copies take sliced pages");
  // Under null/causal masks the length is read after the first tile's copy (contiguous) or page
  // look-up (paged) has gone out. Windows and chunks read it before: they place the first tile
  // by it.
  static constexpr bool kFirstTileEarly = first_tile_before_length<T>();

  // Sliced pages (KvCopyShape): warp split-K tiles (16-row pipelines) read one table entry a tile
  // instead of one a row: the per-row look-ups were a third of a paged tile's instructions (ncu:
  // 315 a warp-tile against 210 contiguous), and at one warp a scheduler each one is time. Other
  // page sizes keep a look-up a row. (Sliced: one paged block streaming 8,192 keys 95 -> 73 us,
  // contiguous 63; warp split-K tiles 3-8% faster over all their paged points.)
  static constexpr int kSliceRows = Copy::kSliceRows;
  static constexpr bool kSliceable = Copy::kSliceable;
  static constexpr int kSlices = kSliceable ? kCopyRows / kSliceRows : 1;
  static constexpr int kRowsPerSlice =
      kSliceable ? kSliceRows / kRowsPerLoad : 1;  // a thread's, in one slice

  // Sliced pages in the key loop: a tile's table entries travel through the pipeline. Thread g of
  // each pipeline copies slice g's entry (4-byte cp.async) into its stage's slot, in the commit
  // group of the tile S - 1 before it; when that tile has landed (the loop's wait and barrier) so
  // has the entry, and the tile's issue reads it from shared memory. Looked up into a register
  // one tile ahead, the entry came back after its use: a single paged block streaming 8,192 keys
  // spent 12% of its stall samples waiting on it (long scoreboard at the page's multiply; ncu).
  // That wait is gone (paged tiles 2-6% faster over their points), though the slot and fetch add
  // about 24 instructions a warp-tile. One int a 16-row slice a stage.
  static constexpr int kEntriesPerStage = kBN / kSliceRows;
  static_assert(!kSliceable || kStages * kEntriesPerStage * 4 <= T::kPageEntryBytes,
                "the entry slots must fit DecodeTraits::kPageEntryBytes");

  // fp8 tiles that the columns math reads with ldmatrix are swizzled too (fp8_swizzled_bytes).
  // A thread's rows step by kRowsPerLoad: a multiple of the swizzle's 8-row period, or half a
  // period (a warp column's 32 copiers at d128: 4 rows), which flips the same chunk bit in every
  // row. So its offsets are one base (or two, alternating with j) plus j row steps. The bases
  // pass through an identity shuffle, which ptxas does not recompute: it sees through
  // ptx::opaque's mov (a PTX instruction) and, with it, recomputed the swizzle from the thread
  // index in every tile (12 instructions, SASS).
  static constexpr bool kFp8CopyStepsRows = T::kFp8InRegisters && kRowsPerLoad % 4 == 0;
  static constexpr int kFp8RowStepBytes = kRowsPerLoad * kCpr * 16;

  // Contiguous bf16/fp16 tiles of 128 threads and BK 64: a thread's swizzled stage offsets, one a
  // row (8 at d128 for a warp column's 32 copiers, whose rows step by 2: four XOR patterns),
  // computed once and held through an identity shuffle. Left to ptxas, the BM-16 BN-64 BK-64
  // four-stage tile recomputed all 8 in every tile from the thread index (330 instructions a
  // warp-tile against 213, SASS); held, one block streaming 131,072 keys takes 0.74x the time
  // (1,322 -> 980 us at batch 8) and the BN-128 BK-64 tiles 0.97-0.99x. Other tiles already
  // keep their offsets and lost 2-14% when held (BK-32 three-stage 1.10x, BN-32 four-stage
  // 1.11x, paged BM 8 1.14x at P 1): the gate keeps each tile's measured better form.
  static constexpr bool kHoldCopyOffsets =
      !T::kKvFp8 && !Kv::kHasLookup && T::kBK == 64 && T::kThreads == 128;

 public:
  // A landed tile's K and V, [BN][depth] each, swizzled for ldmatrix.
  struct MmaTile {
    const Elem* k;
    const Elem* v;
  };

  __device__ __forceinline__ KvPipeline(const DecodeParams& p, int b, unsigned char* smem, int tid,
                                        int kv_head, int warp_m, int warp_n, int lane)
      : smem_(smem),
        warp_n_(warp_n),
        copy_tid_(kColumnPipelines ? warp_m * 32 + lane : tid),
        copy_row0_(kColumnPipelines ? warp_n * kWN : 0),
        k_base_(static_cast<const KvElem*>(p.k_cache)),
        v_base_(static_cast<const KvElem*>(p.v_cache)) {
    // Paged caches: each row's page (a table read in flight a tile ahead) and its byte offset
    // within the page, split from the key once here. Keys past the sequence look up its last
    // key, a valid entry, so no branch guards the read or the address (their copies are
    // zero-filled all the same). A row's byte offset is page · page_bytes + in-page offset, one
    // mul.wide and one add: the thread's KV head and chunk are in the in-page offset from the
    // look-up, and the strides are computed once and held opaque (every one fits an int: a
    // page's bytes). Written as page_row_offset in elements, ptxas re-derived the KV head from
    // blockIdx, reloaded the parameters and multiplied 64 by 64 bits for every row: 184 of the
    // BM-16 tile's 557 instructions a tile against 373 contiguous (SASS).
    if constexpr (Kv::kHasLookup) {
      page_bytes_ = ptx::opaque(Kv::page_stride(p, T::kDepth) * T::kKvElemBytes);
      page_row_bytes_ = ptx::opaque(Kv::row_stride(p, T::kDepth) * T::kKvElemBytes);
      page_thread_bytes_ =
          ptx::opaque((Kv::head_offset(p, kv_head, T::kDepth) + copy_tid_ % kCpr * kChunkElems) *
                      T::kKvElemBytes);
    }
    if constexpr (kSliceable) slice_step_bytes_ = ptx::opaque(kRowsPerLoad * page_row_bytes_);
    // Contiguous caches: thread copy_tid copies chunk copy_tid % kCpr of rows copy_row0 +
    // copy_tid / kCpr + j · kRowsPerLoad of every tile. Its K and V source pointers start at the
    // block's first tile and advance one tile per issue (a 64-bit add each), and its rows are
    // those pointers plus j row steps. The steps are computed once and held opaque
    // (ptx::opaque): otherwise ptxas may recompute them from blockIdx and the parameters in
    // every copy, as it did in the 128-register BM-8 instances (about 50 integer instructions a
    // tile). Computed from the tile index in every issue, the sources cost MQA's BM-16 tile
    // about 40 of its 228 instructions a tile (SASS: a 64-bit multiply and a select per row).
    if constexpr (!Kv::kHasLookup) {
      load_stride_ = ptx::opaque(kRowsPerLoad * Kv::key_stride(p, T::kDepth));
      tile_stride_ = ptx::opaque(kBN * Kv::key_stride(p, T::kDepth));
      thread_row0_ =
          ptx::opaque(Kv::row_offset(p, b, copy_row0_ + copy_tid_ / kCpr, kv_head, T::kDepth) +
                      copy_tid_ % kCpr * kChunkElems);
    }
    if constexpr (kFp8CopyStepsRows) {
      const int r0 = copy_row0_ + copy_tid_ / kCpr, c0 = copy_tid_ % kCpr;
      fp8_copy_offset_[0] = __shfl_sync(0xffffffffu, fp8_swizzled_bytes<kCpr>(r0, c0), lane);
      fp8_copy_offset_[1] = __shfl_sync(
          0xffffffffu, fp8_swizzled_bytes<kCpr>(r0 + kRowsPerLoad, c0) - kFp8RowStepBytes, lane);
    }
    if constexpr (kHoldCopyOffsets) {
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j) {
        const int i = copy_tid_ + j * kCopyThreads;
        const int at = swizzled<kCpr>(copy_row0_ + i / kCpr, i % kCpr) * T::kKvElemBytes;
        copy_offset_[j] = __shfl_sync(0xffffffffu, at, lane);
      }
    }
    if constexpr (Kv::kHasLookup) key_cap_ = p.max_pages_per_seq * p.page_size;
    first_tile_early_ = kFirstTileEarly && p.work == nullptr && (!Kv::kHasLookup || key_cap_ > 0);
  }

  // The prologue starts the pipeline first so the K/V loads overlap the Q load. On the early path
  // (fixed partitions, a mask visible from key 0) a block's first tile is known before its length
  // (block_work). A contiguous cache copies it at once: every row of it lies within the
  // sequence's max_keys slot. A paged cache looks its pages up at once, clamped to the table's
  // row, and copies once the length is in. The length's and Q's loads go out next (decode_block).
  // Contiguous: the first copy, the Q rows and the length then travel in one round trip, where
  // the length was a dependent load before the first copy of every step (0.1-0.2 us on short
  // steps; with Q staged after the length nothing was gained); paged: the look-up, the length and
  // Q travel together, ahead of the first copies (Q's load sent after them waited behind every
  // block's first tile). Stage s holds the block's tile s; other paths (plans, windows, a paged
  // batch whose table has no column) issue the prologue here, once the length is known.
  __device__ __forceinline__ void prologue_start(const DecodeParams& p, BlockWork& w) {
    if (first_tile_early_) {
      if constexpr (Kv::kHasLookup) {
        look_up_tile(p, w, w.first_tile, key_cap_);
      } else {
        point_sources_at(w.first_tile);
        issue_checked(w.first_tile, 0, p.max_keys);
        ptx::cp_async_commit();
      }
    } else {
      if constexpr (kFirstTileEarly) block_length<T>(p, w, sequence_length(p, w));  // plans: known
      read_ahead(p, w, 0, block_tiles_read<T>(w));
      issue_prologue(p, w, 0, kStages - 1, block_tiles_read<T>(w));
    }
  }

  // With the length and Q's rows in flight (Q into registers; shared memory takes them in
  // math.start). A paged early path copies its first tile once the length is in; with sliced
  // pages its later prologue tiles follow Q into shared memory (prologue_after_q), so that their
  // look-ups (read_ahead, sent before the first tile's copies) have time to return; per-row
  // look-ups (one tile's in registers at a time) copy every prologue tile here.
  __device__ __forceinline__ void prologue_with_length(const DecodeParams& p, BlockWork& w,
                                                       int seq_len) {
    if constexpr (kFirstTileEarly && Kv::kHasLookup) {
      if (first_tile_early_) {
        block_length<T>(p, w, seq_len);
        drop_entries_past_length(w);
        read_ahead(p, w, 1, block_tiles_read<T>(w));
        issue_prologue(p, w, 0, kStagesBeforeQ, block_tiles_read<T>(w));
      }
    }
  }

  // Once Q is in shared memory: the early path's remaining prologue tiles (a contiguous cache
  // takes its length here, and its sources move to the block's run).
  __device__ __forceinline__ void prologue_after_q(const DecodeParams& p, BlockWork& w,
                                                   int seq_len) {
    if constexpr (kFirstTileEarly) {
      if (first_tile_early_) {
        if constexpr (!Kv::kHasLookup) {
          block_length<T>(p, w, seq_len);
          point_sources_at(block_run_tile<T>(w, 1));
        }
        issue_prologue(p, w, kStagesBeforeQ, kStages - 1, block_tiles_read<T>(w));
      }
    }
  }

  // The per-row look-up of the loop's first issue, and the early contiguous tile's rows past the
  // length cleared. That copy read the rows past the length too (stale cache rows, perhaps not
  // finite: the tests poison them with NaN). Only the sequence's last tile has such rows, and it
  // is a first tile only when the sequence has at most P tiles: then, once it has landed, each
  // thread zeroes the chunks it copied there, so the stage holds what a checked copy would have
  // left.
  __device__ __forceinline__ void prologue_end(const DecodeParams& p, const BlockWork& w,
                                               int num_tiles) {
    if (!kSlicedPages && kStages - 1 < num_tiles)
      look_up_tile(p, w, block_run_tile<T>(w, kStages - 1), w.n);
    if constexpr (kFirstTileEarly && !Kv::kHasLookup) {
      if (first_tile_early_ && w.num_tiles > 0 && (w.first_tile + 1) * kBN > w.n) {
        ptx::cp_async_wait<kStages - 2>();  // this thread's copies of stage 0 have landed
#pragma unroll
        for (int j = 0; j < kLoadsPerThread; ++j) {
          const int i = copy_tid_ + j * kCopyThreads;
          const int r = copy_row0_ + i / kCpr, c = i % kCpr;
          if (w.first_tile * kBN + r >= w.n) {
            const int at = chunk_offset(j, r, c);
            ptx::st_shared_zero_16(k_stage(0) + at);
            ptx::st_shared_zero_16(v_stage(0) + at);
          }
        }
      }
    }
  }

  // Tile `it` has landed for every copier of this pipeline, and the stage of tile it - 1 is free
  // to refill.
  __device__ __forceinline__ void wait_for_tile() const {
    ptx::cp_async_wait<kStages - 2>();
    wait_for_pipeline();
  }

  // Tile it + S - 1 into the freed stage (with sliced pages, the entries of the tile after it
  // into that stage's slot; with per-row pages, the next tile's look-up), then the commit.
  __device__ __forceinline__ void refill(const DecodeParams& p, const BlockWork& w, int it,
                                         int num_tiles) {
    if (it + kStages - 1 < num_tiles) {
      const int tile = block_run_tile<T>(w, it + kStages - 1);
      // Sliced pages: the entries came with tile `it`, in its stage's slot.
      if constexpr (kSlicedPages) take_entries(p, tile, read_stage_);
      issue(w, tile, write_stage_);
      if constexpr (kSlicedPages) {
        if (it + 2 * kStages - 2 < num_tiles)
          fetch_entries(p, w, block_run_tile<T>(w, it + 2 * kStages - 2), write_stage_);
      } else if (it + kStages < num_tiles) {
        look_up_tile(p, w, block_run_tile<T>(w, it + kStages), w.n);
      }
    }
    ptx::cp_async_commit();
    write_stage_ = next_stage(write_stage_);
  }

  // The landed tile's K and V as the tensor cores read them: its stage, or with an fp8 cache on
  // the MMA rows the fp16 tiles it is converted into (convert_tile: the previous tile's readers
  // passed the pipeline's barrier, so those tiles are free). The next call gives the next tile's.
  __device__ __forceinline__ MmaTile landed_tile(int warp_key0, int tid) {
    const Elem* k_s = reinterpret_cast<const Elem*>(k_stage(read_stage_));
    const Elem* v_s = reinterpret_cast<const Elem*>(v_stage(read_stage_));
    if constexpr (T::kKvFp8 && !T::kFp8InRegisters) {
      Elem* k_converted = reinterpret_cast<Elem*>(smem_ + Layout::kConvert);
      Elem* v_converted = k_converted + kBN * T::kDepth;
      convert_tile<T>(k_stage(read_stage_), v_stage(read_stage_), k_converted, v_converted,
                      warp_key0, tid);
      k_s = k_converted;
      v_s = v_converted;
    }
    read_stage_ = next_stage(read_stage_);
    return {k_s, v_s};
  }

  // Every copy has landed and every thread is past the key loop: the stages are free.
  __device__ __forceinline__ void drain() const {
    ptx::cp_async_wait<0>();
    __syncthreads();
  }

 private:
  // Paged early path: the stages issued before Q goes into shared memory (prologue_with_length).
  static constexpr int kStagesBeforeQ = Kv::kHasLookup && !kSlicedPages ? kStages - 1 : 1;

  __device__ __forceinline__ void wait_for_pipeline() const {
    if constexpr (!kColumnPipelines)
      __syncthreads();
    else if constexpr (T::kWarpsM == 1)
      __syncwarp();
    else
      ptx::named_barrier(1 + warp_n_, kCopyThreads);
  }

  __device__ __forceinline__ unsigned char* k_stage(int s) const {
    return smem_ + Layout::kPipeline + s * T::kStageBytes;
  }
  __device__ __forceinline__ unsigned char* v_stage(int s) const {
    return smem_ + Layout::kPipeline + s * T::kStageBytes + T::kKvTileBytes;
  }
  // The stage a tile is read from and the one the tile kStages - 1 ahead is copied into, each
  // advanced by one (a modulo by 3 was a multiply and three more instructions a tile).
  __device__ __forceinline__ static int next_stage(int stage) {
    return stage + 1 == kStages ? 0 : stage + 1;
  }

  // Where chunk c of this thread's row j (tile row r) lands in a stage: swizzled for ldmatrix;
  // fp8 tiles read only by convert_tile in plain row order; fp8 tiles the columns math reads with
  // ldmatrix from the held bases (kFp8CopyStepsRows).
  __device__ __forceinline__ int chunk_offset(int j, int r, int c) const {
    if constexpr (T::kFp8InRegisters) {
      if constexpr (kFp8CopyStepsRows)
        return fp8_copy_offset_[kRowsPerLoad % 8 == 0 ? 0 : j & 1] + j * kFp8RowStepBytes;
      else
        return fp8_swizzled_bytes<kCpr>(r, c);
    }
    if constexpr (kHoldCopyOffsets) return copy_offset_[j];
    return T::kKvFp8 ? (r * kCpr + c) * 16 : swizzled<kCpr>(r, c) * T::kKvElemBytes;
  }

  // A thread's first key of slice g, and a key's byte offset within its page (this thread's
  // KV head and chunk included).
  __device__ __forceinline__ int slice_key(int tile, int g) const {
    return tile * kBN + copy_row0_ + g * kSliceRows + copy_tid_ / kCpr;
  }
  __device__ __forceinline__ int in_page_bytes(const DecodeParams& p, int key) const {
    if constexpr (Kv::kHasLookup) return Kv::in_page(p, key) * page_row_bytes_ + page_thread_bytes_;
    return 0;
  }
  // Keys from key_end on look up key_end - 1 (the length, or for the early first tile the table's
  // row, key_cap: entries past the length may be unset, drop_entries_past_length).
  __device__ __forceinline__ void read_slices(const DecodeParams& p, const BlockWork& w, int tile,
                                              int key_end, int* pages, int* in_page) const {
#pragma unroll
    for (int g = 0; g < kSlices; ++g) {
      const int key = min(slice_key(tile, g), key_end - 1);
      pages[g] = Kv::lookup(p, w.b, key);
      in_page[g] = in_page_bytes(p, key);
    }
  }
  __device__ __forceinline__ void look_up_tile(const DecodeParams& p, const BlockWork& w, int tile,
                                               int key_end) {
    if constexpr (Kv::kHasLookup) {
      if constexpr (kSlicedPages) {
        read_slices(p, w, tile, key_end, next_pages_, next_in_page_bytes_);
      } else {
#pragma unroll
        for (int j = 0; j < kLoadsPerThread; ++j) {
          const int row = copy_row0_ + (copy_tid_ + j * kCopyThreads) / kCpr;
          const int key = min(tile * kBN + row, key_end - 1);
          next_pages_[j] = Kv::lookup(p, w.b, key);
          next_in_page_bytes_[j] = in_page_bytes(p, key);
        }
      }
    }
  }

  // Slice g's entry in stage `slot`: this pipeline's slices follow those of the pipelines before.
  __device__ __forceinline__ int* entry_slot(int slot, int g) const {
    int* slots = reinterpret_cast<int*>(smem_ + Layout::kPageEntries);
    return slots + slot * kEntriesPerStage + copy_row0_ / kSliceRows + g;
  }
  __device__ __forceinline__ void fetch_entries(const DecodeParams& p, const BlockWork& w, int tile,
                                                int slot) const {
    if constexpr (kSlicedPages) {
      if (copy_tid_ < kSlices) {
        const int key = min(tile * kBN + copy_row0_ + copy_tid_ * kSliceRows, w.n - 1);
        ptx::cp_async_4(entry_slot(slot, copy_tid_), Kv::table_entry(p, w.b, key));
      }
    }
  }
  // Rows past the length get an in-page offset past it too: copy_row drops them.
  __device__ __forceinline__ void take_entries(const DecodeParams& p, int tile, int slot) {
    if constexpr (kSlicedPages) {
#pragma unroll
      for (int g = 0; g < kSlices; ++g) {
        next_pages_[g] = *entry_slot(slot, g);
        next_in_page_bytes_[g] = in_page_bytes(p, slice_key(tile, g));
      }
    }
  }

  // A block's first tile and its run are apart (block_work): the contiguous sources are placed at
  // each.
  __device__ __forceinline__ void point_sources_at(int tile) {
    if constexpr (!Kv::kHasLookup) {
      k_next_ = k_base_ + thread_row0_ + static_cast<long long>(tile) * tile_stride_;
      v_next_ = v_base_ + thread_row0_ + static_cast<long long>(tile) * tile_stride_;
    }
  }

  // Issues one tile's copies of the keys below `limit` (the length; for the early first tile, the
  // contiguous slot's max_keys). Every tile but a sequence's last lies wholly below it (kChecked
  // false): its copies need no per-row test. In the last, rows past it read the cache's first
  // row with a source size of 0 (zero-filled): their V rows contribute 0 · 0, never NaN.
  template <bool kChecked>
  __device__ __forceinline__ void issue_tile(int tile, int stage, int limit) {
    unsigned char* k_s = k_stage(stage);
    unsigned char* v_s = v_stage(stage);
    // Row j's copies, from its byte offset in the cache (paged) or its source pointers.
    auto copy_row = [&](int j, long long paged_off) {
      const int i = copy_tid_ + j * kCopyThreads;
      const int r = copy_row0_ + i / kCpr, c = i % kCpr;
      const bool in_range = !kChecked || tile * kBN + r < limit;
      const void* k_src;
      const void* v_src;
      if constexpr (Kv::kHasLookup) {
        // A sliced row past the length may step past its clamped look-up's page.
        const long long off = in_range ? paged_off : 0;
        k_src = reinterpret_cast<const unsigned char*>(k_base_) + off;
        v_src = reinterpret_cast<const unsigned char*>(v_base_) + off;
      } else {
        k_src = in_range ? k_next_ + j * load_stride_ : k_base_;
        v_src = in_range ? v_next_ + j * load_stride_ : v_base_;
      }
      const int at = chunk_offset(j, r, c);
      ptx::cp_async_16(k_s + at, k_src, in_range ? 16 : 0);
      ptx::cp_async_16(v_s + at, v_src, in_range ? 16 : 0);
    };
    if constexpr (!Kv::kHasLookup) {
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j) copy_row(j, 0);
    } else if constexpr (kSlicedPages) {
#pragma unroll
      for (int g = 0; g < kSlices; ++g) {
        const long long slice_off =
            ptx::mul_wide(next_pages_[g], page_bytes_) + next_in_page_bytes_[g];
#pragma unroll
        for (int jj = 0; jj < kRowsPerSlice; ++jj)
          copy_row(g * kRowsPerSlice + jj, slice_off + jj * slice_step_bytes_);
      }
    } else {
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j)
        copy_row(j, ptx::mul_wide(next_pages_[j], page_bytes_) + next_in_page_bytes_[j]);
    }
  }
  // Tiles are issued in order, so the contiguous sources advance one tile at each issue.
  __device__ __forceinline__ void issue(const BlockWork& w, int tile, int stage) {
    if ((tile + 1) * kBN <= w.n)
      issue_tile<false>(tile, stage, w.n);
    else
      issue_tile<true>(tile, stage, w.n);
    advance_sources();
  }
  __device__ __forceinline__ void issue_checked(int tile, int stage, int limit) {
    issue_tile<true>(tile, stage, limit);
    advance_sources();
  }
  __device__ __forceinline__ void advance_sources() {
    if constexpr (!Kv::kHasLookup) {
      k_next_ += tile_stride_;
      v_next_ += tile_stride_;
    }
  }

  // Sliced pages: the prologue's look-ups all go out before its first issue (read_ahead), in
  // one round trip. Looked up stage by stage, each stage's copy waited for its own look-up: with
  // three stages the paged ramp held one more round trip than the first look-up's own (mha-tune
  // phases: group 16's first tile landed 1.9-2.8 us after the contiguous one's at 8,192 keys and
  // P 8-32). With Q's load ahead of the first copies too (decode_block) and the kernel split by
  // page slicing (decode_kernel), the three together took paged b1 8k 8% less time and b8 512
  // 11% less.
  __device__ __forceinline__ void read_ahead(const DecodeParams& p, const BlockWork& w,
                                             int from_stage, int known_tiles) {
    if constexpr (kSlicedPages) {
#pragma unroll
      for (int s = 0; s < kStages - 1; ++s)
        if (s >= from_stage && s < known_tiles)
          read_slices(p, w, block_tile<T>(p, w, s), w.n, ahead_pages_[s], ahead_in_page_bytes_[s]);
    }
  }
  // Issues the prologue's stages [from_stage, to_stage).
  __device__ __forceinline__ void issue_prologue(const DecodeParams& p, const BlockWork& w,
                                                 int from_stage, int to_stage, int known_tiles) {
#pragma unroll
    for (int s = 0; s < kStages - 1; ++s) {
      if (s < from_stage || s >= to_stage) continue;
      if (s < known_tiles) {
        if constexpr (kSlicedPages) {
          if (s > 0 || !first_tile_early_) {
#pragma unroll
            for (int g = 0; g < kSlices; ++g) {
              next_pages_[g] = ahead_pages_[s][g];
              next_in_page_bytes_[g] = ahead_in_page_bytes_[s][g];
            }
          }
        } else if (s > 0 || !(Kv::kHasLookup && first_tile_early_)) {
          look_up_tile(p, w, block_tile<T>(p, w, s), w.n);
        }
        if (s == 0) point_sources_at(w.first_tile);
        // The early path's prologue tests every row (a few instructions, once a step): with both
        // forms inlined at each of its issue sites its code doubled (SASS).
        if constexpr (kFirstTileEarly)
          issue_checked(block_tile<T>(p, w, s), s, w.n);
        else
          issue(w, block_tile<T>(p, w, s), s);
        if (s == 0)
          point_sources_at(block_run_tile<T>(w, 1));  // the run may lie apart from the first tile
      }
      if (kSlicedPages && s + kStages - 1 < known_tiles)
        fetch_entries(p, w, block_run_tile<T>(w, s + kStages - 1), s);
      ptx::cp_async_commit();
    }
  }
  // The early look-up read the table up to its row's end: entries past the length may be unset
  // (any value), so rows past it take page 0, a valid address for their zero-filled copies. With
  // slices, entry g serves slice g, whose rows lie at or past row g: dropped by row g's key, it
  // holds no row below the length. A checked copy also reads row 0 for every row past the length
  // (copy_row), which alone suffices; this stays as measured until a measured change removes it.
  __device__ __forceinline__ void drop_entries_past_length(const BlockWork& w) {
    if constexpr (Kv::kHasLookup) {
#pragma unroll
      for (int j = 0; j < kLoadsPerThread; ++j)
        if (w.first_tile * kBN + copy_row0_ + (copy_tid_ + j * kCopyThreads) / kCpr >= w.n)
          next_pages_[j] = 0;
    }
  }

  // Set once, at construction.
  unsigned char* smem_;
  int warp_n_;
  // This thread among its pipeline's copiers, and the pipeline's first row of a tile.
  int copy_tid_, copy_row0_;
  const KvElem* k_base_;
  const KvElem* v_base_;
  // The pipeline's changing state, declared in the reverse of the order the single-body kernel
  // declared it as locals: so its PTX registers come out in the order they had. Declared k_next
  // before v_next, the two swapped numbers, and ptxas scheduled the contiguous BM-16 kernel
  // differently (SASS).
  int write_stage_ = kStages - 1, read_stage_ = 0;
  // Paged, sliced pages: the prologue's pages and in-page byte offsets, read ahead.
  int ahead_in_page_bytes_[kStages - 1][kSlices];
  int ahead_pages_[kStages - 1][kSlices];
  int key_cap_ = 0;  // paged: the keys a table row can address
  int fp8_copy_offset_[2] = {0, 0};
  int copy_offset_[kHoldCopyOffsets ? kLoadsPerThread : 1];  // kHoldCopyOffsets
  // Contiguous: the next issue's source pointers and the steps held opaque.
  long long thread_row0_ = 0, tile_stride_ = 0, load_stride_ = 0;
  const KvElem* v_next_ = v_base_;
  const KvElem* k_next_ = k_base_;
  // Paged: the strides held opaque, and the next issue's pages and in-page byte offsets (one a
  // row, or one a slice).
  int slice_step_bytes_ = 0;  // from a thread's row in a slice to its next
  int page_thread_bytes_ = 0, page_row_bytes_ = 0, page_bytes_ = 0;
  int next_in_page_bytes_[Kv::kHasLookup ? kLoadsPerThread : 1];
  int next_pages_[Kv::kHasLookup ? kLoadsPerThread : 1];
  bool first_tile_early_ = false;
};

}  // namespace mha
