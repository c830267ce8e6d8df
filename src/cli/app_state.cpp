// Process-wide facts of one mha-tune invocation: its exit code, its command line and the tool's
// identity (set by main.cpp, where the build's version macros are defined).
#include <string>

#include "cli/commands.h"

namespace mha {
namespace {
int g_exit = 0;
std::string g_invocation, g_version = "unknown", g_commit = "unknown";
}  // namespace

void set_command_exit(int code) { g_exit = code; }
int command_exit() { return g_exit; }
void set_invocation(const std::string& command_line, const std::string& version,
                    const std::string& commit) {
  g_invocation = command_line;
  g_version = version;
  g_commit = commit;
}
const std::string& invocation_text() { return g_invocation; }
const std::string& tool_version() { return g_version; }
const std::string& tool_git_commit() { return g_commit; }

}  // namespace mha
