// `mha-tune select`: per shape bucket, the (tile, partitions) with the lowest geometric-mean
// slowdown against the best measured point; a partition rule for unmeasured shapes fitted to the
// same data; the cost of both, in sample and held out; and the outputs (JSON, and the defaults
// table the library loads: select_decisions.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "defaults/defaults_table.h"
#include "reports/report_json.h"
#include "reports/time_model.h"

namespace mha {

// The rule `mha-tune select` fitted, read from its --out-json file (so that `sweep --partitions
// auto --rule FILE` applies it). Throws UsageError naming the file and key.
PartitionRule read_partition_rule(const std::string& defaults_json_path);

// floor(log2(keys)) (0 for keys < 2): bucket i holds keys in [2^i, 2^(i+1)).
int length_log2(int keys);

struct BucketKey {
  std::string dtype;
  int depth = 0;
  int group = 0;  // heads / kv_heads
  std::string kv;
  std::string mask;
  int work_units = 0;   // batch * kv_heads
  int length_log2 = 0;  // of the longest sequence
  bool ragged = false;  // the sequences' lengths differ (is_ragged_batch)
  int q_len = 1;        // query tokens per sequence (a multi-token family's tiles depend on it)
  bool operator<(const BucketKey& o) const;
  bool operator==(const BucketKey& o) const;
};
BucketKey bucket_of(const ProblemShape& p);
// Whether a problem's sequences have different lengths (a mix that drew one length is uniform).
bool is_ragged_batch(const ProblemShape& p);
std::string bucket_name(const BucketKey& b);  // "bf16_d128_g4_contig_null_wu8_n2^12"

struct BucketChoice {
  BucketKey key;
  std::string kernel;   // a kernel with the chosen tile (out_dtype and sink variants share it)
  KernelTraits traits;  // the tile parameters are what the choice is about
  int partitions = 1;
  // Ragged buckets: the best split plan measured on the chosen tile (0: none), which ragged
  // batches outside any measured bucket take (lookup_config); plans' knobs depend on the cache
  // kind, so only buckets of the same kv lend theirs.
  int ragged_plan = 0;
  int problems = 0;  // distinct problems measured in the bucket
  int covered = 0;   // of which the chosen (tile, partitions) was measured on
  double geomean_cost = 1, worst_cost = 1;  // time / best time over the covered problems
};

// The cost of the defaults on one measured problem: time of what the bucket lookup returns divided
// by the best time measured for that problem (1 is perfect).
struct ProblemCost {
  std::string problem;
  int keys = 0;
  double best_us = 0;
  std::string best_kernel;
  int best_partitions = 0;
  double cost = 0;        // bucket choice (exact bucket, same GPU)
  double rule_cost = 0;   // bucket's tile with rule partitions (0 when the tile was not measured)
  double model_cost = 0;  // the time model's choice (0 when its tile was not measured here)
};

struct HoldoutCost {
  std::string held_out;  // what was held out: "keys=2048", "batch=8", "family=...", "half=0"
  int keys = 0;          // the length held out (by length)
  int half = -1;         // the half of the ragged problems held out (by halves)
  int problems = 0;      // problems with that length
  int uncovered = 0;     // of which the chosen tile was not measured (not in the figures)
  double geomean_cost = 0, worst_cost = 0;  // the table's lookup (nearest bucket and the rule)
  // The defaults select writes now: the model's choice where no bucket was measured.
  int model_uncovered = 0;
  double model_geomean_cost = 0, model_worst_cost = 0;
};

// One named split rule (split_rules.h) on one problem: the bucket default's tile at the rule's P,
// or at the nearest measured P within a factor 2 (snapped).
struct SplitRuleProblem {
  std::string problem;
  int partitions = 1;           // what the rule asks for
  int measured_partitions = 0;  // what was timed in its place (0: none within a factor 2)
  bool is_snapped = false;
  bool is_measured = false;
  bool is_lengths_known = true;  // false: the report kept only the ragged batch's size and max
  double cost = 0;               // time / best time measured for the problem (0: not measured)
};

struct SplitRuleCost {
  std::string rule;
  int problems = 0;      // measured (within a factor 2), in the figures
  int not_measured = 0;  // no P within a factor 2 of the rule's: left out of the figures
  int snapped = 0;
  double geomean_cost = 0, worst_cost = 0;
  std::vector<SplitRuleProblem> details;
};

struct Selection {
  std::string gpu_name;
  int sm_count = 0;
  std::vector<std::string> sources;
  TimeModel model;  // fitted on the same rows: chooses for shapes no bucket measured
  std::vector<std::string> failed_problems;  // every row failed: no bucket, named and untuned
  std::vector<std::string> untuned_buckets;  // their buckets that no other problem measured
  PartitionRule rule;
  double rule_geomean_cost = 0, rule_worst_cost = 0;
  std::vector<BucketChoice> buckets;  // sorted by key
  std::vector<ProblemCost> problems;
  double geomean_cost = 0, worst_cost = 0;
  std::vector<HoldoutCost> holdout;  // empty with fewer than two distinct lengths
  std::vector<HoldoutCost>
      ragged_holdout;                      // two halves; empty with fewer than four ragged problems
  std::vector<HoldoutCost> batch_holdout;  // each batch size held out (two or more sizes)
  std::vector<HoldoutCost> family_holdout;  // each kernel family held out (two or more families)
  std::vector<HoldoutCost> q_len_holdout;   // each query length held out (two or more q_len > 1)
  // One per split_rules() entry, in that order, then the split plan at its best swept knobs
  // (when the reports hold plans).
  std::vector<SplitRuleCost> split_rules;
};

// The table's lookup: the shape's bucket, else the nearest one and the rule (what shapes took
// before the time model; ragged batches still do).
struct ConfigLookup {
  const BucketChoice* bucket = nullptr;  // nullptr: no bucket of this dtype and depth
  bool is_exact = false;
  int partitions = 1;
};
// Exact bucket: its tile and partitions (partitions from the rule when sm_count differs from the
// GPU measured). Else the nearest bucket of the same dtype and depth (distance: kv 16,
// raggedness 8, mask 4, 2 per octave of group, 1 per octave of work units, 1 per length bucket)
// gives the tile; a ragged batch takes the ragged_plan of the nearest ragged bucket of the same
// kv that has one, any other batch the bucket's plan or, for a count, the rule's partitions.
ConfigLookup lookup_config(const Selection& s, const std::string& dtype, int depth, int group,
                           const std::string& kv, const std::string& mask, int batch_kv_heads,
                           int keys, int sm_count, bool ragged = false, int q_len = 1);

// What select's defaults answer for a shape: the measured bucket's own choice when its bucket was
// measured on a GPU of this SM count ("bucket"); else the time model's tile and split for a
// uniform batch ("model"); else, and for ragged batches (a plan adapts to the lengths when it
// runs), the table's nearest bucket with the ragged plan or the rule ("table"). source "" : none.
struct DefaultChoice {
  std::string source;
  std::string kernel;
  KernelTraits traits;
  int partitions = 0;
  double predicted_us = 0;  // the model's prediction ("model" only)
  std::string runner_up;    // the model's second choice and its prediction ("model" only)
  double runner_up_us = 0;
};
// `allowed` narrows the model's candidates (an evaluation passes the points it measured).
DefaultChoice choose_default(const Selection& s, const ProblemShape& shape,
                             const SplitFilter& allowed = {});
// The table's answer alone (lookup_config: the nearest bucket, its plan or the rule), source
// "table".
DefaultChoice table_choice(const Selection& s, const ProblemShape& shape);

// Passed rows only. Reports must come from one GPU model and be kernel sweeps (every row with a
// tile). Throws UsageError when they are not or when no passed row is left. For a point in several
// reports the later report's row wins.
Selection select_defaults(const std::vector<Report>& reports,
                          const std::vector<std::string>& sources, bool corrects_residuals = true);

nlohmann::json selection_to_json(const Selection& s);
std::string selection_summary(const Selection& s);  // human-readable, printed by the command

// What `select` does besides choosing: a held-out evaluation and the model's variant.
struct SelectExtras {
  std::vector<std::string> evaluate_paths;  // price the defaults on these reports' problems
  std::string evaluation_json;              // write that evaluation here
  bool corrects_residuals = true;           // false: the time model's analytic prediction alone
  bool prices_training_problems = false;    // --evaluate also prices problems REPORT measured
  int suggest = 0;                          // > 0: write this many points to measure next
  std::string candidates_path;              // the points to suggest from (plan or report)
  std::string out_points;                   // where the suggestion goes
  std::string out_defaults;                 // the run-time defaults table (select_decisions.h)
};

// Reads the reports, selects, prints the summary, writes the outputs (the defaults table only
// when its text changed: a build embeds it); with extras.suggest, writes the next points to
// measure (suggest.h; REPORTS may then be empty: seeds only); with extras.evaluate_paths, prices
// the defaults on those reports' problems (select_evaluate.h). Returns the exit code (0; 1 when an
// evaluation priced no problem); throws UsageError on unusable input.
int run_select(const std::vector<std::string>& report_paths, const std::string& out_json,
               const SelectExtras& extras = {});

}  // namespace mha
