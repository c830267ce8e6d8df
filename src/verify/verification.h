// Checking a kernel's output against the reference: relative L2 and max abs error over every
// element, NaN/Inf detection, and per-dtype tolerances.
#pragma once

#include <string>
#include <vector>

namespace mha {

struct Tolerance {
  double rel_l2;   // ||out - ref|| / ||ref||
  double max_abs;  // max |out - ref| / max |ref|
};

// Input dtype sets the error of P and of the inputs; a narrow output adds its rounding.
Tolerance tolerance_for(const std::string& dtype, const std::string& out_dtype);

struct ErrorReport {
  double rel_l2 = 0;
  double max_abs = 0;
  long long non_finite = 0;  // elements that are NaN or Inf (including never written)
  long long worst_index = -1;
  bool passed = false;
  std::string reason;  // why it failed, naming the worst element
};

ErrorReport compare_outputs(const std::vector<float>& out, const std::vector<double>& ref,
                            const Tolerance& tol);

}  // namespace mha
