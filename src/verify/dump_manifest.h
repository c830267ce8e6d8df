// What `verify --dump` records beside a point's .npy files: everything its output depends on, so
// that a reference written elsewhere can check it with no other knowledge of mha-tune.
#pragma once

#include <nlohmann/json.hpp>

#include "problems/problem.h"

namespace mha {

// The problem's part of manifest.json: shape, dtypes, scale, mask, sink, soft cap, the cache's
// kind, page size and fp8 scales, the seed and the layout of the files.
nlohmann::json dump_manifest(const Problem& p);

}  // namespace mha
