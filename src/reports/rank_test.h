// Whether two sets of timing samples differ in location, without assuming a distribution: the
// two-sided Mann-Whitney U test, as Google Benchmark's compare tool runs it beside the effect size.
#pragma once

#include <vector>

namespace mha {

// The two-sided p-value of U for samples a and b: the normal approximation with the tie
// correction and a continuity correction (within 0.02 of the exact permutation p from 5 samples a
// side up; tests/test_rank_test.cpp). 1 when either side has no sample or every value is tied.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace mha
