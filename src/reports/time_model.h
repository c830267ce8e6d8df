// The time model's fit: per kernel family and tile, the parameters of a memory-bound step's time
// (api/time_model_choice.h predicts and chooses with them) from sweep rows (docs/design.md, "The
// time model").
#pragma once

#include <string>
#include <vector>

#include "api/time_model_choice.h"
#include "common/result_row.h"
#include "defaults/time_model_json.h"
#include "registry/kernel_registry.h"

namespace mha {

// One measured point: the fit's input.
struct TimeSample {
  ProblemShape shape;
  KernelTraits traits;
  std::string kernel;
  int partitions = 1;  // a count or a cluster code; split plans are not modelled
  double time_us = 0;
};

// Fits every (family, tile) with at least three samples. Plans are ignored (a plan's chunks are
// chosen when it runs; select prices plans by measurement).
TimeModel fit_time_model(const std::vector<TimeSample>& samples, int sm_count,
                         double peak_read_gbps);

// A few lines on the fit.
std::string time_model_summary(const TimeModel& model);

}  // namespace mha
