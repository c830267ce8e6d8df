#include "src/plan_registry.h"

#include <c10/util/Exception.h>

#include <mutex>
#include <unordered_map>
#include <utility>

namespace mha_py {
namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<int64_t, std::shared_ptr<mha::DecodePlan>> plans;
  int64_t next = 1;  // handles are never reused: a stale handle fails instead of aliasing
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

int64_t add_plan(std::shared_ptr<mha::DecodePlan> plan) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const int64_t handle = r.next++;
  r.plans.emplace(handle, std::move(plan));
  return handle;
}

std::shared_ptr<mha::DecodePlan> get_plan(int64_t handle, const char* op) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.plans.find(handle);
  TORCH_CHECK_VALUE(it != r.plans.end(), op, ": plan: no plan has handle ", handle,
                    " (never made, or freed already)");
  return it->second;
}

bool remove_plan(int64_t handle) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.plans.erase(handle) > 0;
}

}  // namespace mha_py
