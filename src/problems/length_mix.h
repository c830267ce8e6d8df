// Ragged batches users recognise, generated from a seed and named stably: "mix=lognormal" with
// batch, keys (the mix's scale) and mix_seed gives the same lengths everywhere, in C++ and in
// scripts/peers/peerlib/suite.py (the peers run the same problems by name).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mha {

// The mixes: uniform (every sequence `keys` long), lognormal (chat traffic: median `keys`,
// sigma 1), one_long (one sequence of `keys` among short ones of keys/256..keys/64), many_long
// (keys/2..keys).
const std::vector<std::string>& length_mix_names();

// The batch's lengths, each in [1, max_keys]. Throws UsageError naming `origin` for an unknown
// mix.
std::vector<int> mix_lengths(const std::string& mix, int batch, int keys, uint64_t seed,
                             int max_keys, const std::string& origin);

// Stable name of a mix: "<mix><batch>x<keys>s<seed>", e.g. "lognormal32x4096s1".
std::string mix_name(const std::string& mix, int batch, int keys, uint64_t seed);

}  // namespace mha
