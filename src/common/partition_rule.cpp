// The partition rule's split count (partition_rule.h).
#include "common/partition_rule.h"

#include <algorithm>

namespace mha {

int auto_partitions(const PartitionRule& rule, int sm_count, int work_units, int keys) {
  if (sm_count <= 0 || work_units <= 0) return 1;
  const double target = rule.alpha * sm_count / work_units;
  int p = static_cast<int>(target);
  if (p < target) ++p;
  const int by_keys = rule.min_keys_per_partition > 0 ? keys / rule.min_keys_per_partition : p;
  p = std::min(p, std::max(by_keys, 1));
  return std::max(1, std::min(p, std::max(rule.max_partitions, 1)));
}

}  // namespace mha
