// What select ships: its defaults (choose_default) laid out on the grid the library looks up, per
// kernel family, half an octave apart in batch x KV heads and in keys (defaults_table.h).
#pragma once

#include "defaults/defaults_table.h"
#include "reports/select.h"

namespace mha {

// Every family select has buckets or fitted tiles of; batch x KV heads from 1 to 8,192 and keys
// from 64 to 262,144; ragged entries for the families with ragged buckets.
DefaultsTable decisions_of(const Selection& s);

// The query the library makes for a shape.
DefaultsQuery defaults_query(const ProblemShape& shape);

}  // namespace mha
