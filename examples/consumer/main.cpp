// An engine's view of mha-tune: list the kernel instances the installed package compiled and,
// when a CUDA device exists, run one split-K decode step on seeded random data through
// mha::decode() and print a checksum of the output and its error against a CPU reference.
// Without a device it lists the kernels and exits 0.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "decode_api.h"

namespace {

#define CONSUMER_CHECK(call)                                                    \
  do {                                                                          \
    const cudaError_t err_ = (call);                                            \
    if (err_ != cudaSuccess) {                                                  \
      std::fprintf(stderr, "error: %s: %s\n", #call, cudaGetErrorString(err_)); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

size_t element_bytes(const std::string& dtype) { return dtype == "fp32" ? 4 : 2; }

// Floats stored as `dtype` ("bf16" | "fp16" | "fp32"), as the kernels read and write them.
std::vector<unsigned char> encode(const std::vector<float>& x, const std::string& dtype) {
  std::vector<unsigned char> bytes(x.size() * element_bytes(dtype));
  for (size_t i = 0; i < x.size(); ++i) {
    if (dtype == "bf16") {
      const __nv_bfloat16 h = __float2bfloat16(x[i]);
      std::memcpy(&bytes[i * 2], &h, 2);
    } else if (dtype == "fp16") {
      const __half h = __float2half(x[i]);
      std::memcpy(&bytes[i * 2], &h, 2);
    } else {
      std::memcpy(&bytes[i * 4], &x[i], 4);
    }
  }
  return bytes;
}

float decode_element(const unsigned char* p, const std::string& dtype) {
  if (dtype == "bf16") {
    __nv_bfloat16 h;
    std::memcpy(&h, p, 2);
    return __bfloat162float(h);
  }
  if (dtype == "fp16") {
    __half h;
    std::memcpy(&h, p, 2);
    return __half2float(h);
  }
  float f;
  std::memcpy(&f, p, 4);
  return f;
}

// One decode step with the first contiguous, unmasked, sink-free instance over a 16-bit cache
// without a soft cap (fp8 caches need scales this example does not make): 2 sequences of 1000
// and 777 keys, 2 KV heads, 4 split-K partitions (so the workspace and the reduce are used).
int run_one_decode() {
  const mha::KernelEntry* kernel = nullptr;
  for (const auto& k : mha::kernel_registry()) {
    if (k.traits.kv == "contig" && k.traits.mask == "null" && !k.traits.has_sink &&
        mha::cache_dtype(k.traits) == k.traits.dtype && !k.traits.soft_cap) {
      kernel = mha::find_kernel(k.name);
      break;
    }
  }
  if (kernel == nullptr) {
    std::printf("no contiguous null-mask kernel compiled: decode skipped\n");
    return 0;
  }
  const mha::KernelTraits& t = kernel->traits;
  const int batch = 2, kv_heads = 2, heads = kv_heads * t.group, max_keys = 1024;
  const int depth = t.depth, partitions = 4;
  const std::vector<int> seq_lens = {1000, 777};

  // Inputs as stored (rounded to t.dtype), kept as floats for the reference below.
  std::mt19937 rng(20261129);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  auto random_values = [&](size_t n) {
    std::vector<float> x(n);
    for (float& v : x) v = uniform(rng);
    const auto stored = encode(x, t.dtype);
    for (size_t i = 0; i < n; ++i) x[i] = decode_element(&stored[i * 2], t.dtype);
    return x;
  };
  const auto qf = random_values(size_t(batch) * heads * depth);
  const auto kf = random_values(size_t(batch) * max_keys * kv_heads * depth);
  const auto vf = random_values(size_t(batch) * max_keys * kv_heads * depth);
  const auto q = encode(qf, t.dtype), k = encode(kf, t.dtype), v = encode(vf, t.dtype);
  const size_t out_bytes = size_t(batch) * heads * depth * element_bytes(t.out_dtype);
  const size_t workspace_bytes = mha::decode_workspace_bytes(batch, heads, depth, partitions);

  void *d_q, *d_k, *d_v, *d_out, *d_workspace;
  int* d_seq_lens;
  CONSUMER_CHECK(cudaMalloc(&d_q, q.size()));
  CONSUMER_CHECK(cudaMalloc(&d_k, k.size()));
  CONSUMER_CHECK(cudaMalloc(&d_v, v.size()));
  CONSUMER_CHECK(cudaMalloc(&d_out, out_bytes));
  CONSUMER_CHECK(cudaMalloc(&d_workspace, workspace_bytes));
  CONSUMER_CHECK(cudaMalloc(&d_seq_lens, seq_lens.size() * sizeof(int)));
  CONSUMER_CHECK(cudaMemcpy(d_q, q.data(), q.size(), cudaMemcpyHostToDevice));
  CONSUMER_CHECK(cudaMemcpy(d_k, k.data(), k.size(), cudaMemcpyHostToDevice));
  CONSUMER_CHECK(cudaMemcpy(d_v, v.data(), v.size(), cudaMemcpyHostToDevice));
  CONSUMER_CHECK(cudaMemcpy(d_seq_lens, seq_lens.data(), seq_lens.size() * sizeof(int),
                            cudaMemcpyHostToDevice));

  mha::DecodeParams p;
  p.q = d_q;
  p.k_cache = d_k;
  p.v_cache = d_v;
  p.seq_lens = d_seq_lens;
  p.out = d_out;
  p.batch = batch;
  p.heads = heads;
  p.kv_heads = kv_heads;
  p.max_keys = max_keys;
  p.partitions = partitions;
  p.scale = 1.f / std::sqrt(float(depth));
  mha::attach_decode_workspace(p, depth, d_workspace);

  CONSUMER_CHECK(mha::decode(p, kernel->name, nullptr));
  CONSUMER_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> out(out_bytes);
  CONSUMER_CHECK(cudaMemcpy(out.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
  const float scale = p.scale;
  double sum = 0, abs_sum = 0, error_sq = 0, ref_sq = 0;
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      // softmax(q K^T * scale) V in double, query head h reading KV head h / group.
      const int n = seq_lens[b], kvh = h / t.group;
      auto row = [&](const std::vector<float>& cache, int j) {
        return &cache[((size_t(b) * max_keys + j) * kv_heads + kvh) * depth];
      };
      const float* qrow = &qf[(size_t(b) * heads + h) * depth];
      std::vector<double> w(n);
      double m = -INFINITY, denom = 0;
      for (int j = 0; j < n; ++j) {
        double dot = 0;
        for (int d = 0; d < depth; ++d) dot += double(qrow[d]) * row(kf, j)[d];
        w[j] = dot * scale;
        m = std::max(m, w[j]);
      }
      for (int j = 0; j < n; ++j) denom += (w[j] = std::exp(w[j] - m));
      for (int d = 0; d < depth; ++d) {
        double ref = 0;
        for (int j = 0; j < n; ++j) ref += w[j] * row(vf, j)[d];
        ref /= denom;
        const size_t i = (size_t(b) * heads + h) * depth + d;
        const double x = decode_element(&out[i * element_bytes(t.out_dtype)], t.out_dtype);
        sum += x;
        abs_sum += std::fabs(x);
        error_sq += (x - ref) * (x - ref);
        ref_sq += ref * ref;
      }
    }
  }
  std::printf("decode: %s batch=%d heads=%d kv_heads=%d keys=1000,777 partitions=%d\n",
              kernel->name.c_str(), batch, heads, kv_heads, partitions);
  std::printf("checksum: sum=%.6g abs_sum=%.6g\n", sum, abs_sum);
  // verify's bound for bf16 and fp16 inputs (src/verify/verification.cpp): P and the output round.
  const double rel_l2_error = std::sqrt(error_sq / ref_sq);
  std::printf("rel_l2_error vs CPU reference: %.3g\n", rel_l2_error);
  for (void* ptr : {d_q, d_k, d_v, d_out, d_workspace, static_cast<void*>(d_seq_lens)}) {
    cudaFree(ptr);
  }
  return rel_l2_error < 1e-2 ? 0 : 1;  // false for NaN too
}

}  // namespace

int main() {
  std::printf("mha-tune package built for CUDA architectures: %s\n", MHA_TUNE_CUDA_ARCHITECTURES);
  for (const auto& k : mha::kernel_registry()) std::printf("kernel: %s\n", k.name.c_str());
  std::printf("%zu kernel(s)\n", mha::kernel_registry().size());
  // What the tuned defaults pick for Llama-3-8B decode at batch 1 and 8,192 keys on an H200.
  mha::DecodeShape llama;
  llama.max_keys = 8192;
  const mha::DecodeChoice choice = mha::choose_decode(llama, 132);
  std::printf("choose: %s partitions=%d (%s)\n", choice.kernel ? choice.kernel->name.c_str() : "none",
              choice.partitions, choice.reason.c_str());
  if (mha::decode(mha::DecodeParams{}, "decode_not_compiled", nullptr) != cudaErrorInvalidValue) {
    std::fprintf(stderr, "error: an unknown kernel name did not return cudaErrorInvalidValue\n");
    return 1;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: decode skipped\n");
    return 0;
  }
  return run_one_decode();
}
