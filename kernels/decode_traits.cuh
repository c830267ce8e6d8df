// One decode-kernel instance: its features (DecodeFeatures: dtypes, depth, group, cache, mask,
// sink, fp8, soft cap) on its tile geometry (TileShape: block and warp tiles, threads, stages, warp
// split-K). Every layout and the shared-memory size derive from them here, and impossible
// combinations fail to compile. scripts/gen_dispatch.py applies the same rules before it
// instantiates anything.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <type_traits>

namespace mha {

template <typename T>
struct DtypeName;
template <>
struct DtypeName<__nv_bfloat16> {
  static constexpr const char* value = "bf16";
};
template <>
struct DtypeName<__half> {
  static constexpr const char* value = "fp16";
};
template <>
struct DtypeName<float> {
  static constexpr const char* value = "fp32";
};
template <>
struct DtypeName<__nv_fp8_e4m3> {
  static constexpr const char* value = "e4m3";
};
template <>
struct DtypeName<__nv_fp8_e5m2> {
  static constexpr const char* value = "e5m2";
};

// What an instance computes: dtypes, head depth, group, cache layout, mask and the optional
// features (a sink, an fp8 cache, soft-capping, several query tokens per sequence).
template <typename Elem_, typename Out_, int kDepth_, int kGroup_, class KvOperand_, class Mask_,
          bool kHasSink_, typename KvElem_ = Elem_, bool kSoftCap_ = false,
          bool kMultiToken_ = false>
struct DecodeFeatures {
  using Elem = Elem_;      // q, and K/V as the tensor cores read them
  using KvElem = KvElem_;  // K/V as the cache stores them: Elem, or fp8 converted on chip
  // What the tensor cores multiply: q's dtype; with an fp8 cache, fp16 (a pair of e4m3 or e5m2
  // values becomes an exact fp16 pair in one instruction; q is converted once per block).
  using MmaElem = std::conditional_t<sizeof(KvElem_) == 1, __half, Elem_>;
  using Out = Out_;
  using KvOperand = KvOperand_;
  using Mask = Mask_;
  static constexpr int kDepth = kDepth_;
  static constexpr int kGroup = kGroup_;
  static constexpr bool kHasSink = kHasSink_;
  // Gemma-2 logit soft-capping, cap * tanh(s / cap), with the cap a runtime value.
  static constexpr bool kSoftCap = kSoftCap_;
  static constexpr bool kKvFp8 = sizeof(KvElem) == 1;
  // Several query tokens per sequence (DecodeParams::q_len, any count from 1): a KV head's
  // group x q_len rows share the block's MMA rows, so K/V are read once for all tokens.
  // Single-token instances keep the row mapping and masks constant (q_len must be 1).
  static constexpr bool kMultiToken = kMultiToken_;
};

// How an instance computes it: the block and warp tiles, threads, pipeline stages and whether the
// warps split the keys.
template <int kBM_, int kBN_, int kBK_, int kWM_, int kWN_, int kThreads_, int kStages_,
          bool kWarpSplitK_>
struct TileShape {
  static constexpr int kBM = kBM_;  // query heads per block (rows of the score tile)
  static constexpr int kBN = kBN_;  // keys per pipeline stage
  static constexpr int kBK = kBK_;  // depth slab of K fragments held in registers at once
  static constexpr int kWM = kWM_;  // warp tile rows
  static constexpr int kWN = kWN_;  // warp tile keys
  static constexpr int kThreads = kThreads_;
  static constexpr int kStages = kStages_;
  static constexpr bool kWarpSplitK = kWarpSplitK_;
};

// One instance: its features on its tile, and everything that derives from the two.
template <class Features, class Tile>
struct DecodeTraits : Features, Tile {
  // The names the derived figures read, from the two parts.
  using Features::kDepth;
  using Features::kGroup;
  using Features::kKvFp8;
  using Tile::kBK;
  using Tile::kBM;
  using Tile::kBN;
  using Tile::kStages;
  using Tile::kThreads;
  using Tile::kWarpSplitK;
  using Tile::kWM;
  using Tile::kWN;
  using typename Features::KvElem;
  using typename Features::KvOperand;

  // WM = 8: the block's BM query heads are the n8 columns of the MMAs (decode_stages_columns.cuh),
  // BM / 8 column tiles of 8 heads that every warp multiplies against its own keys' K/V
  // fragments, so no MMA row is padding for groups of 8 and each fragment read from shared
  // memory serves BM heads. One warp row: the warps split the keys (warp split-K).
  static constexpr bool kHeadsAsColumns = kWM == 8;
  static constexpr int kWarps = kThreads / 32;
  static constexpr int kWarpsM = kHeadsAsColumns ? 1 : kBM / kWM;
  static constexpr int kWarpsN = kBN / kWN;
  // Without warp split-K the P·V product splits the depth across the warps of a row band.
  static constexpr int kPvCols = kWarpSplitK ? kDepth : kDepth / kWarpsN;
  using Features::kMultiToken;
  // Row blocks per KV head for one query token (blocks_per_kv_head: for q_len of them).
  static constexpr int kBlocksPerKvHead = (kGroup + kBM - 1) / kBM;
  // One 16-row block holding a group of at most 8 and one token: rows 8..15 of the MMA tile
  // (each thread's second row, lane / 4 + 8) are padding in every block, so their softmax is
  // never computed.
  static constexpr bool kUpperRowsPadding =
      !kHeadsAsColumns && kBM == 16 && kGroup <= 8 && !kMultiToken;

  static constexpr int kElemBytes = 2;
  static constexpr int kChunksPerRow = kDepth * kElemBytes / 16;  // 16-byte chunks of an Elem row
  // The pipeline holds K/V as stored (fp8: half the bytes, so twice the keys in flight).
  static constexpr int kKvElemBytes = static_cast<int>(sizeof(KvElem));
  static constexpr int kKvChunksPerRow = kDepth * kKvElemBytes / 16;  // 16-byte cp.async chunks
  static constexpr int kKvTileBytes = kBN * kDepth * kKvElemBytes;
  static constexpr int kStageBytes = 2 * kKvTileBytes;  // K and V
  static constexpr int kPipelineBytes = kStages * kStageBytes;
  // fp8 caches, heads as MMA columns: ldmatrix reads the fp8 stage itself and the fragments
  // become fp16 in registers (decode_stages_columns.cuh), so no tile goes through shared memory
  // twice. The ncu profile of the e4m3 BM-8 step (H200, 131k keys) showed occupancy 12%
  // (the fp16 tiles made 98 KB a block) and short-scoreboard stalls leading.
  static constexpr bool kFp8InRegisters = kKvFp8 && kHeadsAsColumns;
  // Other fp8 caches: each landed tile is converted once into Elem tiles (K and V) that the MMAs
  // read.
  static constexpr int kConvertBytes =
      kKvFp8 && !kFp8InRegisters ? 2 * kBN * kDepth * kElemBytes : 0;
  static constexpr int kQBytes = kBM * kDepth * kElemBytes;
  // Without warp split-K, P goes through shared memory (rows padded by 16 bytes against bank
  // conflicts) and the row max/sum of each warp column meet in kRowStatBytes.
  static constexpr int kPStride = kBN + 8;
  static constexpr int kPBytes = kWarpSplitK ? 0 : kBM * kPStride * kElemBytes;
  static constexpr int kRowStatBytes = kWarpSplitK ? 0 : 2 * kWarpsN * kBM * 4;
  // The epilogue gathers (max, sum, unnormalised output) per row, one copy per warp column with
  // warp split-K, in the pipeline buffers once they are drained.
  static constexpr int kMergeCopies = kWarpSplitK ? kWarpsN : 1;
  static constexpr int kMergeBytes = kMergeCopies * kBM * (kDepth + 2) * 4;
  // Paged caches: a slot a stage for the page-table entries of a later tile, one a 16-row slice
  // (decode_kernel.cuh: they travel with the copies, a pipeline ahead), padded to 16 bytes.
  static constexpr int kPageEntryBytes =
      KvOperand::kHasLookup ? (kStages * (kBN / 16) * 4 + 15) / 16 * 16 : 0;
  static constexpr int kSmemBytes = (kPipelineBytes > kMergeBytes ? kPipelineBytes : kMergeBytes) +
                                    kConvertBytes + kQBytes + kPBytes + kRowStatBytes +
                                    kPageEntryBytes;

  static_assert(kDepth == 64 || kDepth == 128 || kDepth == 256, "depth must be 64, 128 or 256");
  static_assert(kGroup >= 1, "group must be at least 1");
  static_assert(kThreads % 32 == 0 && kThreads <= 1024, "threads: a multiple of 32, at most 1024");
  static_assert(
      (kWM % 16 == 0 && kBM % kWM == 0) ||
          (kWM == 8 && (kBM == 8 || kBM == 16 || kBM == 32 || kBM == 64)),
      "WM: a multiple of 16 dividing BM, or WM 8 with BM 8, 16, 32 or 64 (heads as MMA columns)");
  static_assert(kWM != 8 || kWarpSplitK, "WM 8 (heads as MMA columns) needs warp split-K");
  static_assert(kWN % 16 == 0 && kBN % kWN == 0, "WN: a multiple of 16 dividing BN");
  static_assert(kBK % 16 == 0 && kDepth % kBK == 0, "BK: a multiple of 16 dividing depth");
  static_assert(kWarpsM * kWarpsN == kWarps, "(BM/WM)*(BN/WN) warps must equal threads/32");
  static_assert(kPvCols % 16 == 0 && kPvCols * (kWarpSplitK ? 1 : kWarpsN) == kDepth,
                "depth must split into 16-column slices across the warps of a row band");
  static_assert((kBN * kKvChunksPerRow) % kThreads == 0, "K/V tile chunks must divide by threads");
  static_assert(kStages >= 2, "at least two pipeline stages");
  static_assert(kKvElemBytes == kElemBytes || kKvFp8, "K/V: the q dtype or fp8");
  static_assert(kThreads % (kDepth / 4) == 0,
                "threads: a multiple of depth / 4 (the combine's float4 columns)");
};

// Row blocks per KV head: its group x q_len query rows in blocks of BM.
template <class T>
__host__ __device__ inline int blocks_per_kv_head(int q_len) {
  if constexpr (!T::kMultiToken) return T::kBlocksPerKvHead;
  return (T::kGroup * q_len + T::kBM - 1) / T::kBM;
}

}  // namespace mha
