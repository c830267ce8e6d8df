// Seeded length mixes. The generator is SplitMix64 and the normal draw Box-Muller, both simple
// enough to be written identically in Python (scripts/peers/peerlib/suite.py, tested against this).
#include "problems/length_mix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/errors.h"

namespace mha {
namespace {

constexpr double kPi = 3.14159265358979323846;  // Python's math.pi, the same double

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  int between(int lo, int hi) {  // an integer in [lo, hi]
    return lo + static_cast<int>(uniform() * (hi - lo + 1));
  }
};

}  // namespace

const std::vector<std::string>& length_mix_names() {
  static const std::vector<std::string> names = {"uniform", "lognormal", "one_long", "many_long"};
  return names;
}

std::vector<int> mix_lengths(const std::string& mix, int batch, int keys, uint64_t seed,
                             int max_keys, const std::string& origin) {
  const auto& names = length_mix_names();
  if (std::find(names.begin(), names.end(), mix) == names.end())
    throw UsageError(
        fmt::format("{}: key 'mix': '{}' is not one of uniform, lognormal, one_long, "
                    "many_long",
                    origin, mix));
  SplitMix64 rng{seed};
  std::vector<int> lengths;
  for (int i = 0; i < batch; ++i) {
    int n = keys;
    if (mix == "lognormal") {
      const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();  // u1 in (0, 1]
      const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
      // Clamped before the conversion: a draw past 2^31 keys wrapped to 1 key (peers.py, in
      // Python integers, clamped it to max_keys).
      n = static_cast<int>(
          std::llround(std::min(keys * std::exp(z), static_cast<double>(max_keys))));
    } else if (mix == "one_long" && i > 0) {
      n = rng.between(std::max(1, keys / 256), std::max(1, keys / 64));
    } else if (mix == "many_long") {
      n = rng.between(std::max(1, keys / 2), keys);
    }
    lengths.push_back(std::clamp(n, 1, max_keys));
  }
  return lengths;
}

std::string mix_name(const std::string& mix, int batch, int keys, uint64_t seed) {
  return fmt::format("{}{}x{}s{}", mix, batch, keys, seed);
}

}  // namespace mha
