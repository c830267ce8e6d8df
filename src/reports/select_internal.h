// What select's files share and nothing else needs: the bucket choice, the partition rule's fit
// and the split rules' pricing over measured problems.
#pragma once

#include <vector>

#include "reports/measured_problems.h"
#include "reports/select.h"

namespace mha {

int select_ilog2(int x);  // floor(log2(x)), 0 for x < 2

// Per bucket, the (tile, split) with the lowest geometric-mean cost over its problems.
std::vector<BucketChoice> choose_buckets(const Subset& problems);
const BucketChoice* exact_bucket(const std::vector<BucketChoice>& buckets, const BucketKey& k);
// lookup_config's distance between buckets of one dtype and depth.
int bucket_distance(const BucketKey& a, const BucketKey& b);

struct RuleFit {
  PartitionRule rule;
  double geomean = 0, worst = 0;
};
// The rule of least geometric-mean cost over `problems`, each with its bucket's tile.
RuleFit fit_rule(const Subset& problems, const std::vector<BucketChoice>& buckets, int sm_count,
                 int max_partitions);

// Each named split rule (split_rules.h) and the best split plan, on the buckets' tiles.
std::vector<SplitRuleCost> split_rule_costs(const Selection& s, const Subset& problems);

}  // namespace mha
