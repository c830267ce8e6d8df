// Reference attention: float64 on the CPU for small problems, a simple fp32 kernel on the GPU for
// large ones (tested against the CPU one). Both follow the contract in docs/design.md key by key.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "gpu/problem_data.h"
#include "kernels/masks.cuh"
#include "problems/problem.h"

namespace mha {

// out[batch][q_len][heads][depth] in float64.
std::vector<double> cpu_reference(const Problem& problem, const HostInputs& in);

// fp32 output [batch][q_len][heads][depth] computed on the GPU from copy 0 of `data`; with `lse`,
// also each row's log-sum-exp [batch][q_len][heads] (DecodeParams::lse).
std::vector<double> gpu_reference(const Problem& problem, const ProblemData& data,
                                  std::vector<double>* lse = nullptr);

// Whichever of the two fits the problem.
std::vector<double> reference_output(const Problem& problem, const ProblemData& data);

}  // namespace mha
