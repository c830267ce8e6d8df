// Shared by the host tests: a per-process scratch directory, every compiled kernel, and the
// traits of the family most tests use (Llama-3-8B: bf16, d128, group 4, contiguous, null mask) with
// a 16x64 tile.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "api/time_model_choice.h"
#include "registry/kernel_registry.h"

namespace mha::testing {

// Every kernel this build compiled, as the sweep's planners take them.
inline std::vector<const KernelEntry*> all_kernels() {
  std::vector<const KernelEntry*> out;
  for (const KernelEntry& k : kernel_registry()) out.push_back(&k);
  return out;
}

// <tmp>/mha_tune_<suite><pid>, created; one directory per test process so that parallel ctest
// runs never share files. Every C++ test takes its scratch space from here.
inline std::filesystem::path temp_dir(const std::string& suite) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("mha_tune_" + suite + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// <tmp>/mha_tune_<suite><pid>/<name>.
inline std::string temp_path(const std::string& suite, const std::string& name) {
  return (temp_dir(suite) / name).string();
}

inline KernelTraits llama_traits(const std::string& mask = "null") {
  KernelTraits t;
  t.dtype = "bf16";
  t.out_dtype = "bf16";
  t.depth = 128;
  t.group = 4;
  t.kv = "contig";
  t.mask = mask;
  t.bm = 16, t.bn = 64, t.bk = 32, t.wm = 16, t.wn = 16, t.threads = 128, t.stages = 4;
  return t;
}

// A time model of one fitted tile (`traits`, named `kernel`) whose blocks are slow, 5 us a key
// tile on 3 us fixed, so that the widest of `splits` beats P 1 by far: what the tests of the
// model's choice ask it.
inline TimeModel slow_blocks_model(const KernelTraits& traits, const std::string& kernel,
                                   std::set<int> splits) {
  TileModel m;
  m.traits = traits;
  m.kernel = kernel;
  m.tile = tile_id(traits);
  m.family = model_family(traits);
  m.fixed_us = 3;
  m.tile_us = 5;
  m.blocks_per_sm = 2;
  m.bandwidth_gbps = 4000;
  m.reduce_us = 1;
  m.splits = std::move(splits);
  m.rows = 6;
  m.rms_rel_error = 0.05;
  TimeModel model;
  model.sm_count = 132;
  model.peak_read_gbps = 4400;
  model.tiles = {m};
  return model;
}

}  // namespace mha::testing
