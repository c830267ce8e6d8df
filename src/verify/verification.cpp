// Error metrics and tolerances for verification.
#include "verify/verification.h"

#include <fmt/format.h>

#include <cmath>

#include "common/kinds.h"

namespace mha {

Tolerance tolerance_for(const std::string& dtype, const std::string& out_dtype) {
  // bf16 keeps 8 mantissa bits: P and a bf16 output each round by up to 2^-9 relative.
  Tolerance t =
      dtype_from_name(dtype) == Dtype::kBf16 ? Tolerance{1e-2, 4e-2} : Tolerance{2e-3, 1e-2};
  if (dtype_from_name(out_dtype) == Dtype::kBf16)
    t = {std::max(t.rel_l2, 1e-2), std::max(t.max_abs, 4e-2)};
  return t;
}

ErrorReport compare_outputs(const std::vector<float>& out, const std::vector<double>& ref,
                            const Tolerance& tol) {
  ErrorReport r;
  if (out.size() != ref.size()) {
    r.reason = fmt::format("output has {} elements, reference {}", out.size(), ref.size());
    return r;
  }
  double diff2 = 0, ref2 = 0, ref_max = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (!std::isfinite(out[i])) {
      if (r.non_finite++ == 0) r.worst_index = static_cast<long long>(i);
      continue;
    }
    const double d = double(out[i]) - ref[i];
    diff2 += d * d;
    ref2 += ref[i] * ref[i];
    ref_max = std::max(ref_max, std::abs(ref[i]));
    if (std::abs(d) > r.max_abs && r.non_finite == 0) {
      r.max_abs = std::abs(d);
      r.worst_index = static_cast<long long>(i);
    }
  }
  // An all-zero reference (nothing visible) must be matched exactly up to rounding noise.
  r.rel_l2 = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  const double max_rel = ref_max > 0 ? r.max_abs / ref_max : r.max_abs;
  if (r.non_finite > 0) {
    r.reason =
        fmt::format("{} non-finite output elements (first at {})", r.non_finite, r.worst_index);
  } else if (r.rel_l2 > tol.rel_l2) {
    r.reason = fmt::format("relative L2 error {:.3g} > {:.3g}", r.rel_l2, tol.rel_l2);
  } else if (max_rel > tol.max_abs) {
    r.reason = fmt::format("max abs error {:.3g} at element {} ({:.3g} of max |ref|) > {:.3g}",
                           r.max_abs, r.worst_index, max_rel, tol.max_abs);
  } else {
    r.passed = true;
  }
  return r;
}

}  // namespace mha
