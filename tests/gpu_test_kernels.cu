// GPU tests of the kernel family: the fp32 GPU reference against the float64 CPU one, every
// compiled kernel on the basic suite, and deliberately broken kernels that must fail.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "gpu/point_runner.h"
#include "gpu/problem_data.h"
#include "problems/problem.h"
#include "registry/kernel_registry.h"
#include "tests/broken_kernels.cuh"
#include "tests/gpu_test_support.h"
#include "verify/reference.h"
#include "verify/verify_point.h"

namespace mha {
namespace {

// A problem of the kernel's family: specs give an fp8 cache and a soft cap only by saying so.
Problem make_problem(const KernelTraits& t, const std::string& spec) {
  std::string why;
  std::string full = spec + ",kv_dtype=" + cache_dtype(t);
  if (t.soft_cap) full += ",soft_cap=20";
  if (t.multi_token) full += ",q_len=3";  // a multi-token kernel computes several tokens
  auto problems = instantiate(parse_problem_spec(full), t, &why);
  if (problems.empty()) throw std::logic_error("no problem of '" + full + "': " + why);
  problems.front().seed = 7;
  return problems.front();
}

KernelTraits several_tokens(KernelTraits t) {
  t.multi_token = true;
  return t;
}

KernelTraits family(const std::string& dtype, int depth, int group, const std::string& kv,
                    const std::string& mask, bool sink, const std::string& kv_dtype = "",
                    bool soft_cap = false) {
  KernelTraits t;
  t.dtype = dtype;
  t.kv_dtype = kv_dtype;
  t.soft_cap = soft_cap;
  t.out_dtype = "fp32";
  t.depth = depth;
  t.group = group;
  t.kv = kv;
  t.mask = mask;
  t.has_sink = sink;
  t.bn = 64;
  return t;
}

double relative_l2(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return std::sqrt(d / n);
}

TEST(GpuReference, MatchesCpuReference) {
  MHA_REQUIRE_GPU();
  const std::vector<std::pair<KernelTraits, std::string>> cases = {
      {family("bf16", 128, 4, "contig", "null", false), "batch=2,kv_heads=2,keys=1:77:1000"},
      {family("fp16", 64, 7, "paged", "window", true),
       "lengths=300:1:129,kv_heads=2,window=50,page_size=7"},
      {family("bf16", 256, 1, "contig", "chunked", true),
       "batch=2,kv_heads=3,keys=513,chunk=100,sink_mean=4"},
      {family("bf16", 128, 8, "paged", "causal", false),
       "batch=1,kv_heads=2,keys=2049,page_size=1,q_std=6"},
      // fp8 caches dequantised with each KV head's scale, and capped scores.
      {family("bf16", 128, 4, "paged", "null", false, "e4m3"),
       "lengths=300:1:129,kv_heads=4,page_size=16,kv_dtype=e4m3,kv_scale=head"},
      {family("fp16", 64, 2, "contig", "null", true, "e5m2", true),
       "batch=2,kv_heads=2,keys=700,kv_dtype=e5m2,soft_cap=3,q_std=4"},
      // Several query tokens, each masked at its own position (some before the first key).
      {several_tokens(family("bf16", 128, 4, "contig", "causal", false)),
       "lengths=300:1:129,kv_heads=2,q_len=5"},
      {several_tokens(family("fp16", 64, 8, "paged", "window", true)),
       "lengths=700:3,kv_heads=2,page_size=16,window=4,q_len=8"},
  };
  for (const auto& [traits, spec] : cases) {
    std::string why;
    const std::vector<Problem> problems = instantiate(parse_problem_spec(spec), traits, &why);
    EXPECT_FALSE(problems.empty()) << spec << ": " << why;  // nothing compared is no pass
    for (Problem p : problems) {
      p.seed = 11;
      ProblemData data(p, 1);
      const auto cpu = cpu_reference(p, data.download());
      const auto gpu = gpu_reference(p, data);
      EXPECT_LT(relative_l2(gpu, cpu), 1e-5) << p.shape.name;
    }
  }
}

TEST(Kernels, EveryCompiledKernelPassesTheBasicSuite) {
  MHA_REQUIRE_GPU();
  for (const KernelEntry& k : kernel_registry()) {
    for (Problem& p : builtin_suite("basic", k.traits)) {
      p.seed = 3;
      ProblemData data(p, 1);
      const auto ref = reference_output(p, data);
      for (int partitions : p.partitions)
        for (ReduceMode mode : {ReduceMode::kFused, ReduceMode::kSeparate,
                                ReduceMode::kProgrammatic, ReduceMode::kCluster}) {
          const VerifyOutcome r = verify_point(k, p, data, partitions, ref, mode);
          EXPECT_EQ(r.status, Status::kPassed)
              << k.name << " " << p.shape.name << " p" << partitions << " reduce mode "
              << static_cast<int>(mode) << ": " << r.reason;
        }
    }
  }
}

// Cluster splits (partitions=clusterP) are chosen per point, whatever the run's reduce mode: each
// verifies on every kernel with no partials allocated, ragged lengths included (a sequence shorter
// than its partitions leaves some of a cluster's blocks without keys).
TEST(Kernels, ClusterSplitsVerifyWithoutPartials) {
  MHA_REQUIRE_GPU();
  for (const KernelEntry& k : kernel_registry()) {
    Problem p = make_problem(k.traits,
                             "batch=3,kv_heads=2,lengths=700:1:4100,partitions=cluster2:cluster8");
    ProblemData data(p, 1);
    const auto ref = reference_output(p, data);
    ASSERT_EQ(p.partitions.size(), 2u);
    for (int split : p.partitions) {
      ASSERT_TRUE(is_cluster_split(split));
      EXPECT_EQ(StepBuffers(p, k.traits, split, ReduceMode::kSeparate).partial_out.bytes(), 0u);
      const VerifyOutcome r = verify_point(k, p, data, split, ref, ReduceMode::kSeparate);
      EXPECT_EQ(r.status, Status::kPassed)
          << k.name << " " << split_label(split) << ": " << r.reason;
    }
  }
}

// Each fault must be caught on a problem that exercises it, and its control must pass.
TEST(Kernels, DeliberatelyBrokenKernelsFailVerification) {
  MHA_REQUIRE_GPU();
  const auto broken = testing::broken_kernels();
  const auto control = testing::control_kernels();
  struct Case {
    const KernelEntry& bad;
    const KernelEntry& good;
    std::string spec;
    int partitions;
  };
  const std::vector<Case> cases = {
      {broken[0], control[0], "batch=1,kv_heads=2,keys=4099,q_std=8", 7},
      {broken[1], control[0], "batch=1,kv_heads=2,keys=1000", 1},
      {broken[2], control[1], "batch=1,kv_heads=2,keys=1500,sink_mean=3", 4},
  };
  for (const Case& c : cases) {
    Problem p = make_problem(c.bad.traits, c.spec);
    ProblemData data(p, 1);
    const auto ref = reference_output(p, data);
    for (ReduceMode mode : {ReduceMode::kFused, ReduceMode::kSeparate, ReduceMode::kProgrammatic,
                            ReduceMode::kCluster}) {
      const VerifyOutcome bad = verify_point(c.bad, p, data, c.partitions, ref, mode);
      EXPECT_EQ(bad.status, Status::kIncorrect) << c.bad.name << " passed " << p.shape.name;
    }
    const VerifyOutcome good = verify_point(c.good, p, data, c.partitions, ref);
    EXPECT_EQ(good.status, Status::kPassed) << c.good.name << ": " << good.reason;
  }
}

// One decode step captured into a CUDA graph on `stream`; null (and a test failure) when the
// capture or the launch fails.
cudaGraph_t capture_step(const KernelEntry& k, const DecodeParams& params, cudaStream_t stream) {
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) {
    ADD_FAILURE() << "cudaStreamBeginCapture failed";
    return nullptr;
  }
  const cudaError_t launched = k.launch(params, stream);
  cudaGraph_t graph = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  EXPECT_EQ(launched, cudaSuccess) << k.name;
  EXPECT_EQ(ended, cudaSuccess) << k.name;
  return launched == cudaSuccess && ended == cudaSuccess ? graph : nullptr;
}

// The programmatic reduce must survive CUDA-graph capture as a programmatic edge (else a graph
// replay serialises it like a plain launch, or drops the dependency), and the replayed graph
// must still compute the right output.
TEST(Kernels, ProgrammaticReduceIsAProgrammaticEdgeInACapturedGraph) {
  MHA_REQUIRE_GPU();
  const KernelEntry& k = kernel_registry().front();
  Problem p = make_problem(k.traits, "batch=2,kv_heads=2,keys=3000");
  const int partitions = 8;
  ProblemData data(p, 1);
  const auto ref = reference_output(p, data);
  StepBuffers buffers(p, k.traits, partitions, ReduceMode::kProgrammatic);
  DecodeParams params = data.params(0, partitions);
  buffers.attach(params);
  ASSERT_TRUE(params.programmatic_reduce);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  cudaGraph_t graph = capture_step(k, params, stream);
  ASSERT_NE(graph, nullptr);

  size_t edges = 0;
  ASSERT_EQ(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &edges), cudaSuccess);
  ASSERT_EQ(edges, 1u) << "decode kernel -> reduce";
  std::vector<cudaGraphNode_t> from(edges), to(edges);
  std::vector<cudaGraphEdgeData> data_of(edges);
  ASSERT_EQ(cudaGraphGetEdges(graph, from.data(), to.data(), data_of.data(), &edges), cudaSuccess);
  EXPECT_EQ(data_of[0].type, cudaGraphDependencyTypeProgrammatic);

  cudaGraphExec_t exec;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  buffers.poison_all(stream);
  for (int replay = 0; replay < 3; ++replay) ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  const auto out = buffers.download_output(p.shape.out_dtype);
  EXPECT_LT(relative_l2(std::vector<double>(out.begin(), out.end()), ref), 5e-3);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// A split plan lives in fixed-size device buffers: a graph captured for one set of lengths must
// replay correctly after the lengths change and the host plans again into the same buffers (a
// short sequence becoming the long one changes every work item). Every kernel, both kv kinds.
TEST(Kernels, SplitPlanGraphReplaysAfterTheLengthsChange) {
  MHA_REQUIRE_GPU();
  const std::vector<int> before = {3000, 3000, 3000, 3000};
  const std::vector<int> after = {1, 2999, 64, 700};  // each within its old length: valid data
  for (const KernelEntry& k : kernel_registry()) {
    Problem p = make_problem(k.traits, "batch=4,kv_heads=2,lengths=3000:3000:3000:3000");
    const int split = encode_split_plan({1, 64});
    ProblemData data(p, 1);
    StepBuffers buffers(p, k.traits, split, ReduceMode::kProgrammatic);
    DecodeParams params = data.params(0, split);
    buffers.attach(params);
    ASSERT_GT(buffers.plan.work.size(), 4u) << "long sequences are cut into chunks";
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
    cudaGraph_t graph = capture_step(k, params, stream);
    ASSERT_NE(graph, nullptr);
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);

    auto replay_and_check = [&](const Problem& now, const HostInputs& inputs) {
      buffers.poison_all(stream);
      ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      const auto out = buffers.download_output(now.shape.out_dtype);
      const auto ref = cpu_reference(now, inputs);
      EXPECT_LT(relative_l2(std::vector<double>(out.begin(), out.end()), ref), 5e-3) << k.name;
    };
    HostInputs inputs = data.download();
    replay_and_check(p, inputs);

    Problem changed = p;
    changed.lengths = after;
    inputs.lengths = after;
    ASSERT_EQ(cudaMemcpy(const_cast<int*>(params.seq_lens), after.data(),
                         sizeof(int) * after.size(), cudaMemcpyHostToDevice),
              cudaSuccess);
    buffers.replan(visible_ranges(changed), stream);
    EXPECT_LE(buffers.plan.work.size(), size_t(buffers.plan_capacity));
    EXPECT_EQ(buffers.plan.seqs[0].chunks, 1) << "the 1-key sequence";
    replay_and_check(changed, inputs);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// Fixed partition counts are batch-invariant: a sequence's output does not depend on the other
// sequences of its batch (plans are not: their chunk size does). Bitwise, through the reduce.
TEST(Kernels, FixedPartitionsAreBatchInvariant) {
  MHA_REQUIRE_GPU();
  const KernelEntry& k = kernel_registry().front();
  Problem p = make_problem(k.traits, "batch=3,kv_heads=2,lengths=2000:2000:2000");
  ProblemData data(p, 1);
  StepBuffers buffers(p, k.traits, 4, ReduceMode::kSeparate);
  DecodeParams params = data.params(0, 4);
  buffers.attach(params);
  auto run = [&] {
    EXPECT_EQ(k.launch(params, 0), cudaSuccess);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    return buffers.download_output(p.shape.out_dtype);
  };
  const auto alone = run();
  const std::vector<int> others = {2000, 7, 1500};  // sequence 0 keeps its length
  ASSERT_EQ(cudaMemcpy(const_cast<int*>(params.seq_lens), others.data(), sizeof(int) * 3,
                       cudaMemcpyHostToDevice),
            cudaSuccess);
  const auto mixed = run();
  const size_t row = alone.size() / 3;
  for (size_t i = 0; i < row; ++i) ASSERT_EQ(alone[i], mixed[i]) << "element " << i;
}

}  // namespace
}  // namespace mha
