// A decode step with phase stamps: see phase_runner.h.
#include "common/errors.h"
#include "gpu/device_buffer.h"
#include "gpu/phase_runner.h"
#include "kernels/phase_clock.cuh"

namespace mha {

bool phase_stamps_compiled_in() { return phase::kCompiledIn; }

PhaseStamps run_stamped_step(const KernelEntry& kernel, const ProblemData& data, int copy,
                             int partitions, const StepBuffers& buffers, cudaStream_t stream) {
  DecodeParams p = data.params(copy, partitions);
  buffers.attach(p);
  // The decode grid as launch_decode sizes it (one row of stamps a block).
  const KernelTraits& t = kernel.traits;
  const long long decode_blocks = decode_grid(p, row_blocks_per_kv_head(t, p.q_len)).blocks();
  const long long reduce_blocks = static_cast<long long>(p.heads) * p.q_len * p.batch;
  DeviceBuffer decode(sizeof(uint64_t) * phase::kDecodeStamps * decode_blocks);
  DeviceBuffer reduce(sizeof(uint64_t) * phase::kReduceStamps * reduce_blocks);
  MHA_CUDA_CHECK(cudaMemsetAsync(decode.get(), 0, decode.bytes(), stream));
  MHA_CUDA_CHECK(cudaMemsetAsync(reduce.get(), 0, reduce.bytes(), stream));
  p.phase_decode = decode.get<unsigned long long>();
  p.phase_reduce = reduce.get<unsigned long long>();
  p.phase_decode_blocks = decode_blocks;
  MHA_CUDA_CHECK(kernel.launch(p, stream));
  MHA_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::vector<unsigned long long> d(phase::kDecodeStamps * decode_blocks),
      r(phase::kReduceStamps * reduce_blocks);
  MHA_CUDA_CHECK(cudaMemcpy(d.data(), decode.get(), decode.bytes(), cudaMemcpyDeviceToHost));
  MHA_CUDA_CHECK(cudaMemcpy(r.data(), reduce.get(), reduce.bytes(), cudaMemcpyDeviceToHost));
  PhaseStamps out;
  for (long long i = 0; i < decode_blocks; ++i) {
    const unsigned long long* s = &d[i * phase::kDecodeStamps];
    DecodeBlockStamps b;
    b.start_ns = s[phase::kDecodeStartNs];
    b.exit_ns = s[phase::kDecodeExitNs];
    b.start_cycle = s[phase::kDecodeStartCycle];
    b.first_tile_cycle = s[phase::kFirstTileCycle];
    b.loop_end_cycle = s[phase::kLoopEndCycle];
    b.merged_cycle = s[phase::kMergedCycle];
    b.cluster_met_cycle = s[phase::kClusterMetCycle];
    b.combined_cycle = s[phase::kCombinedCycle];
    b.exit_cycle = s[phase::kDecodeExitCycle];
    b.sm = static_cast<int>(s[phase::kDecodeSm]);
    out.decode.push_back(b);
  }
  for (long long b = 0; b < reduce_blocks; ++b) {
    const unsigned long long* s = &r[b * phase::kReduceStamps];
    out.reduce.push_back(
        {s[phase::kReduceStartNs], s[phase::kReduceWaitedNs], s[phase::kReduceExitNs]});
  }
  return out;
}

}  // namespace mha
