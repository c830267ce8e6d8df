// A generated problem as an engine hands it to the library (decode_plan.h): its DecodeShape and
// the DecodeArgs of one copy of its inputs, packed. `mha-tune library` and the GPU tests of the
// plan/run API share them.
#pragma once

#include "api/decode_plan.h"
#include "problems/problem.h"

namespace mha {

DecodeShape decode_shape_of(const Problem& problem);

// The views of copy `in` (ProblemData::params) with the output and workspace given.
DecodeArgs decode_args_of(const DecodeParams& in, const Problem& problem, void* out,
                          void* workspace);

}  // namespace mha
