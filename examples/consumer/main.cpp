// An engine's view of mha-tune: list the kernel instances the installed package compiled and,
// when a CUDA device exists, plan and run one decode step of the first of them (any family) on
// seeded random data and print a checksum of the output and its error against a CPU reference.
// Without a device it lists the kernels and exits 0.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api/decode_api.h"
#include "api/decode_plan.h"

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

// The layout and the extras of the kernel's family, as an engine would set them up.
struct Family {
  bool paged = false, hnd = false, fp8 = false;
  int page_size = 16, window = 0, chunk = 0;
  float soft_cap = 0.f;
  std::vector<float> sinks, k_scale, v_scale;  // per query head; per KV head
};

// K/V values as an fp8 cache stores them (value / scale, rounded), back as the floats they mean.
std::vector<unsigned char> encode_fp8(std::vector<float>& x, const std::string& dtype,
                                      const std::vector<float>& scale, int row_heads, int depth) {
  std::vector<unsigned char> bytes(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float s = scale[(i / depth) % row_heads];
    if (dtype == "e4m3") {
      const __nv_fp8_e4m3 e(x[i] / s);
      std::memcpy(&bytes[i], &e, 1);
      x[i] = float(e) * s;
    } else {
      const __nv_fp8_e5m2 e(x[i] / s);
      std::memcpy(&bytes[i], &e, 1);
      x[i] = float(e) * s;
    }
  }
  return bytes;
}

// One decode step through mha::DecodePlan and mha::run with the first compiled kernel, whatever
// its family (contiguous or paged, 16-bit or fp8, masks, sinks, a soft cap): 2 sequences of 1000
// and 777 keys, 2 KV heads, the split the defaults choose for the ragged pair, checked against a
// CPU reference.
int run_one_decode() {
  const mha::KernelEntry& kernel = mha::kernel_registry().front();
  const mha::KernelTraits& t = kernel.traits;
  const int batch = 2, kv_heads = 2, heads = kv_heads * t.group, max_keys = 1024, depth = t.depth;
  const std::vector<int> seq_lens = {1000, 777};
  Family f;
  f.paged = t.kv != "contig";
  f.hnd = t.kv == "paged_hnd";
  f.fp8 = mha::cache_dtype(t) != t.dtype;
  if (t.mask == "window") f.window = 256;
  if (t.mask == "chunked") f.chunk = 256;
  if (t.soft_cap) f.soft_cap = 30.f;
  if (t.has_sink) f.sinks.assign(heads, 0.5f);
  if (f.fp8) f.k_scale = f.v_scale = {0.004f, 0.006f};

  // Inputs as stored (rounded to their dtypes), kept as floats for the reference below. The
  // logical cache is [batch][max_keys][kv_heads][depth]; a paged one puts key j of sequence b in
  // page b * pages_per_seq + j / page_size.
  std::mt19937 rng(20261129);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  auto random_values = [&](size_t n, const std::string& dtype) {
    std::vector<float> x(n);
    for (float& v : x) v = uniform(rng);
    const auto stored = encode(x, dtype);
    for (size_t i = 0; i < n; ++i) x[i] = decode_element(&stored[i * 2], dtype);
    return x;
  };
  const size_t cache_elems = size_t(batch) * max_keys * kv_heads * depth;
  const auto qf = random_values(size_t(batch) * heads * depth, t.dtype);
  auto kf = random_values(cache_elems, t.dtype), vf = random_values(cache_elems, t.dtype);
  const auto q = encode(qf, t.dtype);
  std::vector<unsigned char> k, v;
  if (f.fp8) {
    k = encode_fp8(kf, mha::cache_dtype(t), f.k_scale, kv_heads, depth);
    v = encode_fp8(vf, mha::cache_dtype(t), f.v_scale, kv_heads, depth);
  } else {
    k = encode(kf, t.dtype);
    v = encode(vf, t.dtype);
  }
  const int pages_per_seq = (max_keys + f.page_size - 1) / f.page_size;
  std::vector<int> page_table(size_t(batch) * pages_per_seq);
  for (size_t i = 0; i < page_table.size(); ++i) page_table[i] = int(i);
  if (f.hnd) {
    // [page][kv_head][slot][depth] from the logical [seq][key][kv_head][depth].
    const size_t elem = k.size() / cache_elems;
    auto to_hnd = [&](const std::vector<unsigned char>& logical) {
      std::vector<unsigned char> paged(logical.size());
      for (size_t key = 0; key < size_t(batch) * max_keys; ++key)
        for (int h = 0; h < kv_heads; ++h) {
          const size_t page = key / f.page_size, slot = key % f.page_size;
          const size_t to = ((page * kv_heads + h) * f.page_size + slot) * depth * elem;
          std::memcpy(&paged[to], &logical[(key * kv_heads + h) * depth * elem], depth * elem);
        }
      return paged;
    };
    k = to_hnd(k);
    v = to_hnd(v);
  }

  mha::DecodePlanOptions options;
  options.shape.dtype = t.dtype;
  options.shape.out_dtype = t.out_dtype;
  options.shape.kv_dtype = f.fp8 ? mha::cache_dtype(t) : "";
  options.shape.soft_cap = t.soft_cap;
  options.shape.kv = t.kv;
  options.shape.mask = t.mask;
  options.shape.has_sink = t.has_sink;
  options.shape.depth = depth;
  options.shape.heads = heads;
  options.shape.kv_heads = kv_heads;
  options.shape.batch = batch;
  options.shape.max_keys = max_keys;
  options.shape.ragged = true;
  options.page_size = f.paged ? f.page_size : 0;
  options.window = f.window;
  options.chunk = f.chunk;
  options.kernel = kernel.name;
  mha::DecodePlan plan;
  mha::DecodeStatus status = mha::DecodePlan::make(options, &plan);
  if (!status.ok()) {
    std::fprintf(stderr, "error: plan: %s\n", status.message.c_str());
    return 1;
  }

  const size_t out_bytes = size_t(batch) * heads * depth * element_bytes(t.out_dtype);
  void *d_q, *d_k, *d_v, *d_out, *d_workspace = nullptr;
  int *d_seq_lens, *d_page_table;
  float *d_sinks, *d_k_scale, *d_v_scale;
  auto upload = [](void** dst, const void* src, size_t bytes) {
    cudaError_t err = cudaMalloc(dst, bytes > 0 ? bytes : 16);
    if (err == cudaSuccess && bytes > 0) err = cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice);
    return err;
  };
  CONSUMER_CHECK(upload(&d_q, q.data(), q.size()));
  CONSUMER_CHECK(upload(&d_k, k.data(), k.size()));
  CONSUMER_CHECK(upload(&d_v, v.data(), v.size()));
  CONSUMER_CHECK(cudaMalloc(&d_out, out_bytes));
  CONSUMER_CHECK(
      upload(reinterpret_cast<void**>(&d_seq_lens), seq_lens.data(), seq_lens.size() * 4));
  CONSUMER_CHECK(
      upload(reinterpret_cast<void**>(&d_page_table), page_table.data(), page_table.size() * 4));
  CONSUMER_CHECK(upload(reinterpret_cast<void**>(&d_sinks), f.sinks.data(), f.sinks.size() * 4));
  CONSUMER_CHECK(
      upload(reinterpret_cast<void**>(&d_k_scale), f.k_scale.data(), f.k_scale.size() * 4));
  CONSUMER_CHECK(
      upload(reinterpret_cast<void**>(&d_v_scale), f.v_scale.data(), f.v_scale.size() * 4));
  if (plan.workspace_bytes() > 0) CONSUMER_CHECK(cudaMalloc(&d_workspace, plan.workspace_bytes()));
  // A split plan's work list depends on the step's lengths.
  status = plan.set_lengths(seq_lens.data(), batch, d_workspace, nullptr);
  if (!status.ok()) {
    std::fprintf(stderr, "error: set_lengths: %s\n", status.message.c_str());
    return 1;
  }

  mha::DecodeArgs args;
  args.batch = batch;
  args.q = d_q;
  args.k_cache = d_k;
  args.v_cache = d_v;
  args.page_table = f.paged ? d_page_table : nullptr;
  args.max_pages_per_seq = pages_per_seq;
  args.kv_max_keys = max_keys;
  args.seq_lens = d_seq_lens;
  args.sink_logits = t.has_sink ? d_sinks : nullptr;
  args.k_scale = f.fp8 ? d_k_scale : nullptr;
  args.v_scale = f.fp8 ? d_v_scale : nullptr;
  args.soft_cap = f.soft_cap;
  args.out = d_out;
  args.workspace = d_workspace;
  status = mha::run(plan, args, nullptr);
  if (!status.ok()) {
    std::fprintf(stderr, "error: run: %s\n", status.message.c_str());
    return 1;
  }
  CONSUMER_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> out(out_bytes);
  CONSUMER_CHECK(cudaMemcpy(out.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
  const double scale = 1.0 / std::sqrt(double(depth));
  double sum = 0, abs_sum = 0, error_sq = 0, ref_sq = 0;
  for (int b = 0; b < batch; ++b) {
    for (int h = 0; h < heads; ++h) {
      // softmax(q K^T * scale, capped, masked, with the sink) V in double; KV head h / group.
      const int n = seq_lens[b], kvh = h / t.group, pos = n - 1;
      auto row = [&](const std::vector<float>& cache, int j) {
        return &cache[((size_t(b) * max_keys + j) * kv_heads + kvh) * depth];
      };
      auto visible = [&](int j) {
        if (f.window > 0) return pos - f.window < j;
        if (f.chunk > 0) return j / f.chunk == pos / f.chunk;
        return true;
      };
      const float* qrow = &qf[(size_t(b) * heads + h) * depth];
      std::vector<double> w(n, -INFINITY);
      double m = t.has_sink ? f.sinks[h] : -INFINITY, denom = 0;
      for (int j = 0; j < n; ++j) {
        if (!visible(j)) continue;
        double dot = 0;
        for (int d = 0; d < depth; ++d) dot += double(qrow[d]) * row(kf, j)[d];
        w[j] = dot * scale;
        if (f.soft_cap > 0) w[j] = f.soft_cap * std::tanh(w[j] / f.soft_cap);
        m = std::max(m, w[j]);
      }
      for (int j = 0; j < n; ++j) denom += (w[j] = std::exp(w[j] - m));
      if (t.has_sink) denom += std::exp(f.sinks[h] - m);
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
  std::printf("decode: %s batch=%d heads=%d kv_heads=%d keys=1000,777 split=%s (%s)\n",
              kernel.name.c_str(), batch, heads, kv_heads, plan.split().c_str(),
              plan.reason().c_str());
  std::printf("checksum: sum=%.6g abs_sum=%.6g\n", sum, abs_sum);
  // verify's bound for bf16 and fp16 inputs (src/verify/verification.cpp): P and the output round.
  const double rel_l2_error = std::sqrt(error_sq / ref_sq);
  std::printf("rel_l2_error vs CPU reference: %.3g\n", rel_l2_error);
  for (void* ptr : {d_q, d_k, d_v, d_out, d_workspace, static_cast<void*>(d_seq_lens),
                    static_cast<void*>(d_page_table), static_cast<void*>(d_sinks),
                    static_cast<void*>(d_k_scale), static_cast<void*>(d_v_scale)}) {
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
  std::printf("choose: %s partitions=%d (%s)\n",
              choice.kernel ? choice.kernel->name.c_str() : "none", choice.partitions,
              choice.reason.c_str());
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
