// launch_decode<Traits>: one decode step of one kernel instance (decode kernel, then the split-K
// reduce when some sequence has more than one partition, unless the decode kernel combines the
// partitions itself: fused, or in a cluster). Each generated .cu instantiates it once.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>

#include "kernels/cluster_combine.cuh"
#include "kernels/decode_kernel.cuh"
#include "kernels/decode_params.cuh"
#include "kernels/decode_traits.cuh"
#include "kernels/fault_injection.cuh"
#include "kernels/kv_operand.cuh"
#include "kernels/masks.cuh"
#include "kernels/splitk_reduce.cuh"

namespace mha {

template <class T>
cudaError_t launch_decode(const DecodeParams& p, cudaStream_t stream) {
  const bool planned = p.work != nullptr;
  // Single-token instances compute one query token; multi-token ones any count from 1, ragged too.
  const bool tokens_ok = T::kMultiToken ? p.q_len >= 1 : p.q_len == 1 && p.cu_seqlens_q == nullptr;
  if (p.heads != p.kv_heads * T::kGroup || p.partitions < 1 || p.batch < 1 || !tokens_ok ||
      (planned && (p.work_count == nullptr || p.seq_splits == nullptr || p.work_capacity < 1))) {
    return cudaErrorInvalidValue;
  }
  // More than 48 KB of dynamic shared memory must be opted into once per device.
  static std::atomic<uint64_t> configured_devices{0};
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) return err;
  const uint64_t bit = uint64_t{1} << (device % 64);
  if (!(configured_devices.load() & bit)) {
    err = cudaFuncSetAttribute(decode_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               T::kSmemBytes);
    if (err != cudaSuccess) return err;
    configured_devices.fetch_or(bit);
  }
  // The fused combine keeps its scratch in the drained pipeline buffers; beyond what they hold
  // (very many partitions), and for plans, the reduce runs as its own launch.
  DecodeParams args = p;
  fill_row_strides(args, T::kDepth);
  T::KvOperand::fill_strides(args, T::kDepth);
  constexpr int kScratchFloats = DecodeSmemLayout<T>::kQ / 4;
  if (planned || fused_combine_scratch_floats(T::kBM, p.partitions) > kScratchFloats)
    args.split_counters = nullptr;
  const DecodeGrid shape = decode_grid(p, blocks_per_kv_head<T>(p.q_len));
  const dim3 grid(shape.x, shape.y, shape.z);
  args.cluster_combine = !planned && cluster_combines(p.cluster_combine, p.partitions);
  if (args.cluster_combine) {
    // The P partitions of a row block (grid x) form one cluster and combine in the kernel.
    args.split_counters = nullptr;
    cudaLaunchConfig_t config = {};
    config.gridDim = grid;
    config.blockDim = dim3(T::kThreads);
    config.dynamicSmemBytes = T::kSmemBytes;
    config.stream = stream;
    cudaLaunchAttribute cluster = {};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim.x = static_cast<unsigned>(p.partitions);
    cluster.val.clusterDim.y = 1;
    cluster.val.clusterDim.z = 1;
    config.attrs = &cluster;
    config.numAttrs = 1;
    return cudaLaunchKernelEx(&config, decode_kernel<T>, args);
  }
  if (p.cluster_combine) args.programmatic_reduce = true;  // no cluster for this split
  decode_kernel<T><<<grid, T::kThreads, T::kSmemBytes, stream>>>(args);
  err = cudaGetLastError();
  if (err != cudaSuccess || (!planned && p.partitions == 1) || args.split_counters != nullptr)
    return err;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(p.heads * p.q_len, p.batch);  // one block per query row
  config.blockDim = dim3(reduce_threads(T::kDepth));
  config.dynamicSmemBytes =
      combine_scratch_floats(reduce_threads(T::kDepth), T::kDepth) * sizeof(float);
  config.stream = stream;
  cudaLaunchAttribute programmatic = {};
  programmatic.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  programmatic.val.programmaticStreamSerializationAllowed = 1;
  config.attrs = &programmatic;
  config.numAttrs = p.programmatic_reduce ? 1 : 0;
  return cudaLaunchKernelEx(&config,
                            splitk_reduce_kernel<typename T::Out, T::kHasSink, injected_fault<T>(),
                                                 T::kMultiToken, reduce_threads(T::kDepth)>,
                            args, static_cast<int>(T::kDepth));
}

}  // namespace mha
