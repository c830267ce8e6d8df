// Plans behind integer handles: torch op schemas carry ints, not C++ objects, and an int is a
// constant that torch.compile and CUDA graphs capture as is. A handle stays valid until free_plan;
// shared ownership keeps a plan alive through a run that races a free on another thread.
#pragma once

#include <cstdint>
#include <memory>

#include "api/decode_plan.h"

namespace mha_py {

int64_t add_plan(std::shared_ptr<mha::DecodePlan> plan);
// The plan of `handle`; throws ValueError naming `op` for a handle never made or already freed.
std::shared_ptr<mha::DecodePlan> get_plan(int64_t handle, const char* op);
// Whether `handle` named a plan (false: unknown or freed already; freeing twice is harmless).
bool remove_plan(int64_t handle);

}  // namespace mha_py
