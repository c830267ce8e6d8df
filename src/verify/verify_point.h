// Verification of one point: poison the outputs, launch, synchronise, compare with the reference
// (verification.h's tolerances), the launch's error classified into a disposition.
#pragma once

#include <string>
#include <vector>

#include "common/result_row.h"
#include "gpu/point_runner.h"
#include "gpu/problem_data.h"
#include "problems/problem.h"
#include "registry/kernel_registry.h"
#include "verify/verification.h"

namespace mha {

struct VerifyOutcome {
  Status status = Status::kFailed;
  std::string reason;
  ErrorReport error;
  std::vector<float> output;  // the kernel's output (for --dump)
};

VerifyOutcome verify_point(const KernelEntry& kernel, const Problem& problem,
                           const ProblemData& data, int partitions, const std::vector<double>& ref,
                           ReduceMode mode = ReduceMode::kSeparate);

}  // namespace mha
