// mha-tune: benchmarks and autotunes a flash-decoding attention kernel family.
// Subcommands live in cmd_*.cpp; this file maps errors to docs/design.md's exit codes.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/commands.h"
#include "commit/mha_build_commit.h"  // MHA_GIT_COMMIT, resolved at every build (cmake/MhaCommitHeader.cmake)
#include "common/errors.h"

#ifndef MHA_VERSION
#define MHA_VERSION "0.0.0"
#endif
#ifndef MHA_BUILD_INFO
#define MHA_BUILD_INFO ""
#endif

namespace {

// An option given an empty value ("--threshold ''", "--out=") acted as absent or as zero; every
// option of mha-tune takes a value that cannot be empty. Returns the option's name, or "".
std::string option_with_empty_value(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) continue;
    const size_t eq = arg.find('=');
    if (eq != std::string::npos && eq + 1 == arg.size()) return arg.substr(0, eq);
    if (eq == std::string::npos && i + 1 < argc && argv[i + 1][0] == '\0') return arg;
  }
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  std::string invocation;
  for (int i = 0; i < argc; ++i) invocation += (i ? " " : "") + std::string(argv[i]);
  mha::set_invocation(invocation, MHA_VERSION, MHA_GIT_COMMIT);
  CLI::App app{"mha-tune: benchmark, verify and autotune flash-decoding attention kernels"};
  app.set_version_flag("--version", fmt::format("mha-tune {} (git {})\nbuild: {}", MHA_VERSION,
                                                MHA_GIT_COMMIT, MHA_BUILD_INFO));
  app.require_subcommand(1);
  mha::add_list_command(app);
  mha::add_verify_command(app);
  mha::add_sweep_command(app);
  mha::add_select_command(app);
  mha::add_compare_command(app);
  mha::add_merge_command(app);
  mha::add_noise_command(app);
  mha::add_export_command(app);
  mha::add_phases_command(app);
  mha::add_library_command(app);
  mha::add_schema_command(app);
  try {
    if (const std::string option = option_with_empty_value(argc, argv); !option.empty())
      throw mha::UsageError(option + ": an empty value (give one, or leave the option out)");
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? mha::kExitOk : mha::kExitUsage;
  } catch (const mha::UsageError& e) {
    std::fprintf(stderr, "mha-tune: error: %s\n", e.what());
    return mha::kExitUsage;
  } catch (const mha::CudaError& e) {
    std::fprintf(stderr, "mha-tune: CUDA error: %s\n", e.what());
    if (std::getenv("MHA_DEBUG") && !e.location.empty())
      std::fprintf(stderr, "mha-tune: (debug) raised at %s\n", e.location.c_str());
    return mha::kExitEnvironment;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mha-tune: error: %s\n", e.what());
    return mha::kExitEnvironment;
  }
  return mha::command_exit();
}
