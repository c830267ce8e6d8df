// `mha-tune noise A B --out FILE`: the cross-machine noise floor that `compare --noise` applies,
// measured from two reports of the same code on two machines of one GPU model.
#include <memory>
#include <string>

#include "cli/commands.h"
#include "reports/noise_floor.h"

namespace mha {

void add_noise_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand(
      "noise",
      "Measure the cross-machine noise floor from two reports of the same code on two machines "
      "of one GPU model; write it for `compare --noise`");
  struct Args {
    std::string a, b, out;
    NoiseOptions options;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("report_a", args->a, "Report from one machine (JSON), e.g. the baseline")
      ->required();
  cmd->add_option("report_b", args->b, "Report of the same code from another machine (JSON)")
      ->required();
  cmd->add_option("--out", args->out, "Noise floor file to write (JSON)")->required();
  cmd->add_option("--quantile", args->options.quantile,
                  "Quantile of |change| per time range (default 0.99)");
  cmd->add_option("--margin", args->options.margin,
                  "Factor on the quantile in log terms, carrying it into the tail (default 1.5)");
  cmd->add_option("--min-pairs", args->options.min_bucket_pairs,
                  "Fewest pairs per time range; shorter ranges are merged (default 30)");
  cmd->add_flag("--allow-different-gpu", args->options.allow_different_gpu,
                "Accept reports from different GPU models");
  cmd->callback(
      [args] { set_command_exit(run_noise(args->a, args->b, args->out, args->options)); });
}

}  // namespace mha
