// Verification of one point: poison the outputs, launch, synchronise, compare with the reference
// (verification.h's tolerances), the launch's error classified into a disposition.
#pragma once

#include <string>
#include <vector>

#include "kernel_registry.h"
#include "point_runner.h"
#include "problem.h"
#include "problem_data.h"
#include "result_row.h"
#include "verification.h"

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
