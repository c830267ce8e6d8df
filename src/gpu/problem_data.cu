// Generates a problem's inputs on the GPU from its seed and lays out contiguous or paged caches.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "common/kinds.h"
#include "gpu/problem_data.h"
#include "kernels/masks.cuh"
#include "kernels/ptx.cuh"
#include "problems/draft_tree.h"

namespace mha {
namespace {

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Element i of a seeded N(mean, std) stream (Box-Muller on two hashed uniforms).
__device__ inline float normal_at(uint64_t seed, size_t i, float mean, float std) {
  const uint64_t h = splitmix64(seed * 0x100000001b3ull + i);
  const float u1 = (static_cast<float>(h >> 40) + 1.f) / 16777217.f;  // (0, 1]
  const float u2 = static_cast<float>((h >> 16) & 0xffffff) / 16777216.f;
  return mean + std * sqrtf(-2.f * logf(u1)) * cospif(2.f * u2);
}

template <typename T>
__global__ void fill_normal_kernel(T* dst, size_t count, uint64_t seed, float mean, float std) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = ptx::from_float<T>(normal_at(seed, i, mean, std));
}

// An fp8 cache in logical layout: element i belongs to KV head (i / depth) % kv_heads, whose
// values are N(0, sigma[head]^2), stored quantised as fp8(x / scale[head]) (saturating).
template <typename T>
__global__ void fill_quantised_kernel(T* dst, size_t count, uint64_t seed, int depth, int kv_heads,
                                      const float* sigma, const float* scale) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < count;
       i += size_t(gridDim.x) * blockDim.x) {
    const int head = static_cast<int>((i / depth) % kv_heads);
    dst[i] = ptx::from_float<T>(normal_at(seed, i, 0.f, sigma[head]) / scale[head]);
  }
}

// Key slots at or past each sequence's length become NaN.
template <typename T>
__global__ void poison_tail_kernel(T* cache, const int* lengths, int max_len, int row_elems) {
  const int b = blockIdx.y;
  const size_t per_seq = size_t(max_len) * row_elems;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < per_seq;
       i += size_t(gridDim.x) * blockDim.x)
    if (static_cast<int>(i / row_elems) >= lengths[b])
      cache[b * per_seq + i] = ptx::from_float<T>(NAN);
}

// Copies each visible key row from the logical cache into its page, in NHD order
// ([page_size][kv_heads][depth] a page) or HND ([kv_heads][page_size][depth]).
template <typename T>
__global__ void scatter_pages_kernel(const T* logical, T* paged, const int* page_table,
                                     const int* lengths, int max_len, int max_pages, int page_size,
                                     int kv_heads, int depth, bool hnd) {
  const int b = blockIdx.y;
  const int row_elems = kv_heads * depth;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < size_t(lengths[b]) * row_elems;
       i += size_t(gridDim.x) * blockDim.x) {
    const int key = static_cast<int>(i / row_elems);
    const int head = static_cast<int>(i % row_elems) / depth, d = static_cast<int>(i % depth);
    const size_t page = page_table[b * max_pages + key / page_size], slot = key % page_size;
    const size_t at = hnd ? ((page * kv_heads + head) * page_size + slot) * depth + d
                          : ((page * page_size + slot) * kv_heads + head) * depth + d;
    paged[at] = logical[(size_t(b) * max_len + key) * row_elems + i % row_elems];
  }
}

template <typename F>
void dispatch_elem(const std::string& dtype, F&& f) {
  switch (dtype_from_name(dtype)) {
    case Dtype::kBf16:
      f(__nv_bfloat16{});
      break;
    case Dtype::kFp16:
      f(__half{});
      break;
    case Dtype::kE4m3:
      f(__nv_fp8_e4m3{});
      break;
    case Dtype::kE5m2:
      f(__nv_fp8_e5m2{});
      break;
    default:
      throw UsageError("unsupported input dtype '" + dtype + "'");
  }
}

template <typename T>
void fill(void* dst, size_t count, uint64_t seed, float mean, float std) {
  if (count == 0) return;
  fill_normal_kernel<T><<<1024, 256>>>(static_cast<T*>(dst), count, seed, mean, std);
  MHA_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
std::vector<float> to_host_floats(const void* src, size_t count) {
  std::vector<T> raw(count);
  MHA_CUDA_CHECK(cudaMemcpy(raw.data(), src, count * sizeof(T), cudaMemcpyDeviceToHost));
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = ptx::to_float(raw[i]);
  return out;
}

}  // namespace

KvQuantisation kv_quantisation(const ProblemShape& s) {
  KvQuantisation q;
  if (!is_fp8(s.kv_dtype)) return q;
  float widest = 0.f;
  for (int h = 0; h < s.kv_heads; ++h) {
    q.k_sigma.push_back(std::ldexp(1.f, h % 4 - 1));
    q.v_sigma.push_back(kVSigmaFactor * q.k_sigma.back());
    widest = std::max(widest, q.k_sigma.back());
  }
  // 8 sigma maps onto the format's largest value: saturation is beyond any sample drawn.
  const float range = fp8_max(dtype_from_name(s.kv_dtype)) / 8.f;
  for (int h = 0; h < s.kv_heads; ++h) {
    q.k_scale.push_back((s.kv_scale == "head" ? q.k_sigma[h] : widest) / range);
    q.v_scale.push_back(kVSigmaFactor * q.k_scale.back());
  }
  return q;
}

void poison(void* dst, size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  MHA_CUDA_CHECK(cudaMemsetAsync(dst, 0xff, bytes, stream));  // NaN in fp32, bf16, fp16 and fp8
}

ProblemData::ProblemData(const Problem& problem, int copies) : problem_(problem) {
  const ProblemShape& s = problem.shape;
  const int max_len = std::max(1, problem.max_length());
  const int row_elems = s.kv_heads * s.depth;
  q_elems_ = size_t(total_query_tokens(s)) * s.heads * s.depth;
  logical_elems_ = size_t(s.batch) * max_len * row_elems;

  lengths_ = DeviceBuffer(sizeof(int) * s.batch);
  MHA_CUDA_CHECK(cudaMemcpy(lengths_.get(), problem.lengths.data(), sizeof(int) * s.batch,
                            cudaMemcpyHostToDevice));

  std::vector<int> table;
  size_t num_pages = 0;
  if (mha::is_paged(s.kv)) {
    max_pages_per_seq_ = (max_len + s.page_size - 1) / s.page_size;
    for (int n : problem.lengths) num_pages += (n + s.page_size - 1) / s.page_size;
    std::vector<int> physical(num_pages);
    std::iota(physical.begin(), physical.end(), 0);
    std::mt19937_64 rng(problem.seed);
    std::shuffle(physical.begin(), physical.end(), rng);  // pages in arbitrary physical order
    table.assign(size_t(s.batch) * max_pages_per_seq_, -1);
    size_t next = 0;
    for (int b = 0; b < s.batch; ++b)
      for (int pg = 0; pg < (problem.lengths[b] + s.page_size - 1) / s.page_size; ++pg)
        table[size_t(b) * max_pages_per_seq_ + pg] = physical[next++];
    page_table_ = DeviceBuffer(sizeof(int) * table.size());
    MHA_CUDA_CHECK(cudaMemcpy(page_table_.get(), table.data(), sizeof(int) * table.size(),
                              cudaMemcpyHostToDevice));
    cache_elems_ = std::max<size_t>(1, num_pages) * s.page_size * row_elems;
  } else {
    cache_elems_ = logical_elems_;
  }
  if (s.has_sink) {
    sink_ = DeviceBuffer(sizeof(float) * s.heads);
    fill<float>(sink_.get(), s.heads, problem.seed ^ 0x5151, problem.sink_mean, 1.f);
  }
  if (!s.ragged_q_lens.empty()) {  // cu_seqlens_q
    const std::vector<int> starts = query_token_starts(s);
    token_starts_ = DeviceBuffer(sizeof(int) * starts.size());
    MHA_CUDA_CHECK(cudaMemcpy(token_starts_.get(), starts.data(), token_starts_.bytes(),
                              cudaMemcpyHostToDevice));
  }
  tree_words_ = draft_tree_words(problem);
  if (!tree_words_.empty()) {
    tree_ = DeviceBuffer(sizeof(TreeWord) * tree_words_.size());
    MHA_CUDA_CHECK(
        cudaMemcpy(tree_.get(), tree_words_.data(), tree_.bytes(), cudaMemcpyHostToDevice));
  }
  quant_ = kv_quantisation(s);
  DeviceBuffer k_sigma, v_sigma;
  if (!quant_.k_scale.empty()) {
    auto upload = [&](const std::vector<float>& values) {
      DeviceBuffer buffer(sizeof(float) * values.size());
      MHA_CUDA_CHECK(
          cudaMemcpy(buffer.get(), values.data(), buffer.bytes(), cudaMemcpyHostToDevice));
      return buffer;
    };
    k_sigma = upload(quant_.k_sigma);
    v_sigma = upload(quant_.v_sigma);
    k_scale_ = upload(quant_.k_scale);
    v_scale_ = upload(quant_.v_scale);
  }

  for (int c = 0; c < copies; ++c) {
    dispatch_elem(s.dtype, [&](auto tag) {
      using T = decltype(tag);
      q_.emplace_back(q_elems_ * sizeof(T));
      fill<T>(q_.back().get(), q_elems_, splitmix64(problem.seed + 1000003ull * c) ^ 1, 0.f,
              problem.q_std);
    });
  }
  dispatch_elem(s.kv_dtype, [&](auto tag) {
    using T = decltype(tag);
    for (int c = 0; c < copies; ++c) {
      const uint64_t seed = splitmix64(problem.seed + 1000003ull * c);
      DeviceBuffer k(logical_elems_ * sizeof(T)), v(logical_elems_ * sizeof(T));
      if constexpr (sizeof(T) == 1) {  // fp8: quantised with the scales above
        fill_quantised_kernel<T><<<1024, 256>>>(k.get<T>(), logical_elems_, seed ^ 2, s.depth,
                                                s.kv_heads, k_sigma.get<float>(),
                                                k_scale_.get<float>());
        fill_quantised_kernel<T><<<1024, 256>>>(v.get<T>(), logical_elems_, seed ^ 3, s.depth,
                                                s.kv_heads, v_sigma.get<float>(),
                                                v_scale_.get<float>());
        MHA_CUDA_CHECK(cudaGetLastError());
      } else {
        fill<T>(k.get(), logical_elems_, seed ^ 2, 0.f, 1.f);
        fill<T>(v.get(), logical_elems_, seed ^ 3, 0.f, 1.f);
      }
      const dim3 grid(256, s.batch);
      poison_tail_kernel<T><<<grid, 256>>>(k.get<T>(), lengths_.get<int>(), max_len, row_elems);
      poison_tail_kernel<T><<<grid, 256>>>(v.get<T>(), lengths_.get<int>(), max_len, row_elems);
      MHA_CUDA_CHECK(cudaGetLastError());
      if (mha::is_paged(s.kv)) {
        DeviceBuffer kp(cache_elems_ * sizeof(T)), vp(cache_elems_ * sizeof(T));
        poison(kp.get(), kp.bytes());
        poison(vp.get(), vp.bytes());
        scatter_pages_kernel<T><<<grid, 256>>>(k.get<T>(), kp.get<T>(), page_table_.get<int>(),
                                               lengths_.get<int>(), max_len, max_pages_per_seq_,
                                               s.page_size, s.kv_heads, s.depth,
                                               kv_from_name(s.kv) == KvKind::kPagedHnd);
        scatter_pages_kernel<T><<<grid, 256>>>(v.get<T>(), vp.get<T>(), page_table_.get<int>(),
                                               lengths_.get<int>(), max_len, max_pages_per_seq_,
                                               s.page_size, s.kv_heads, s.depth,
                                               kv_from_name(s.kv) == KvKind::kPagedHnd);
        MHA_CUDA_CHECK(cudaGetLastError());
        k_.push_back(std::move(kp));
        v_.push_back(std::move(vp));
        if (c == 0) {
          k_logical_ = std::move(k);
          v_logical_ = std::move(v);
        }
      } else {
        k_.push_back(std::move(k));
        v_.push_back(std::move(v));
      }
    }
  });
  MHA_CUDA_CHECK(cudaDeviceSynchronize());
}

DecodeParams ProblemData::params(int copy, int partitions) const {
  const ProblemShape& s = problem_.shape;
  DecodeParams p;
  p.q = q_[copy].get();
  p.k_cache = k_[copy].get();
  p.v_cache = v_[copy].get();
  p.page_table = page_table_.get<int>();
  p.seq_lens = lengths_.get<int>();
  p.sink_logits = sink_.get<float>();
  p.k_scale = k_scale_.get<float>();
  p.v_scale = v_scale_.get<float>();
  p.tree_mask = tree_.get<unsigned>();
  p.cu_seqlens_q = token_starts_.get<int>();
  p.soft_cap = static_cast<float>(s.soft_cap);
  p.batch = s.batch;
  p.heads = s.heads;
  p.kv_heads = s.kv_heads;
  p.q_len = s.q_len;
  p.max_keys = std::max(1, problem_.max_length());
  set_page_size(p, s.page_size);
  p.max_pages_per_seq = max_pages_per_seq_;
  p.partitions = partitions;
  p.window = s.window;
  p.chunk = s.chunk;
  p.scale = problem_.effective_scale();
  return p;
}

HostInputs ProblemData::download() const {
  HostInputs h;
  h.lengths = problem_.lengths;
  h.max_len = std::max(1, problem_.max_length());
  const void* k = k_logical();
  const void* v = v_logical();
  dispatch_elem(problem_.shape.dtype,
                [&](auto tag) { h.q = to_host_floats<decltype(tag)>(q_[0].get(), q_elems_); });
  dispatch_elem(problem_.shape.kv_dtype, [&](auto tag) {
    h.k = to_host_floats<decltype(tag)>(k, logical_elems_);
    h.v = to_host_floats<decltype(tag)>(v, logical_elems_);
  });
  if (!quant_.k_scale.empty()) {  // the values the cache stands for
    const int depth = problem_.shape.depth, kv_heads = problem_.shape.kv_heads;
    for (size_t i = 0; i < logical_elems_; ++i) {
      const size_t head = (i / depth) % kv_heads;
      h.k[i] *= quant_.k_scale[head];
      h.v[i] *= quant_.v_scale[head];
    }
  }
  h.tree_words = tree_words_;
  if (problem_.shape.has_sink) {
    h.sink_logits.resize(problem_.shape.heads);
    MHA_CUDA_CHECK(cudaMemcpy(h.sink_logits.data(), sink_.get(),
                              sizeof(float) * h.sink_logits.size(), cudaMemcpyDeviceToHost));
  }
  return h;
}

double copy_bytes(const Problem& problem) {
  const ProblemShape& s = problem.shape;
  const double row_bytes = double(s.kv_heads) * s.depth * element_bytes(s.kv_dtype);
  double key_slots = 0;
  if (mha::is_paged(s.kv)) {
    for (int n : problem.lengths)
      key_slots += double((n + s.page_size - 1) / s.page_size) * s.page_size;
  } else {
    key_slots = double(s.batch) * std::max(1, problem.max_length());
  }
  return double(total_query_tokens(s)) * s.heads * s.depth * 2 + 2 * key_slots * row_bytes;
}

}  // namespace mha
