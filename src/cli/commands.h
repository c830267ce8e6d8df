// Subcommands of the mha-tune CLI. Each add_* registers one subcommand on the app; its callback
// runs the command and records the exit code with set_command_exit (docs/design.md's codes).
// Errors are thrown (UsageError -> 2, CudaError -> 3) and mapped to exit codes in main.cpp.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace mha {

void add_list_command(CLI::App& app);     // cmd_list.cpp
void add_verify_command(CLI::App& app);   // cmd_verify.cpp
void add_sweep_command(CLI::App& app);    // cmd_sweep.cpp
void add_select_command(CLI::App& app);   // cmd_select.cpp
void add_compare_command(CLI::App& app);  // cmd_compare.cpp
void add_merge_command(CLI::App& app);    // cmd_merge.cpp
void add_noise_command(CLI::App& app);    // cmd_noise.cpp
void add_export_command(CLI::App& app);   // cmd_export.cpp
void add_phases_command(CLI::App& app);   // cmd_phases.cpp
void add_library_command(CLI::App& app);  // cmd_library.cpp
void add_schema_command(CLI::App& app);   // cmd_schema.cpp

// --filter (kernel globs), --problem (inline specs, repeatable) and --problems (a JSON file):
// the selection verify, sweep and phases share (selection_options.cpp).
void add_selection_options(CLI::App* cmd, std::vector<std::string>& filters,
                           std::vector<std::string>& problem_specs, std::string& problems_file,
                           const std::string& problem_example);

void set_command_exit(int code);
int command_exit();

// The invocation (app_state.cpp), recorded in report metadata.
void set_invocation(const std::string& command_line, const std::string& version,
                    const std::string& commit);
const std::string& invocation_text();
const std::string& tool_version();
const std::string& tool_git_commit();

}  // namespace mha
