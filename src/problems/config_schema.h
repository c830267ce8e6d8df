// The config files of configs/ as `sweep --config` reads them: validated by the generator's own
// schema (config_schema_json(), embedded at build time), so a config the generator refuses is
// refused here too, and the families it names, to compare with what the build compiled.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "registry/kernel_registry.h"

namespace mha {

// What a kernel family computes: the traits that decide which problems its kernels serve.
struct KernelFamily {
  std::string dtype, out_dtype;
  int depth = 0, group = 0;
  std::string kv, mask;
  bool has_sink = false;
  bool multi_token = false;

  bool operator<(const KernelFamily& o) const;
  bool operator==(const KernelFamily& o) const;
};
KernelFamily family_of(const KernelTraits& t);
// "bf16->bf16 d128 g4 contig null[ sink][ multi-token]"
std::string family_text(const KernelFamily& f);

struct ConfigFamily {
  std::string name;
  KernelFamily family;
};

// Checks a parsed config by the rules of scripts/gen_dispatch.py (known keys, schema_version,
// choices, tile blocks), in its order; throws UsageError "<file>: <key path>: <problem>".
// Returns the families. `schema_json` is the schema data (default: this build's).
std::vector<ConfigFamily> validate_config(const nlohmann::json& config, const std::string& file,
                                          const char* schema_json = nullptr);
// Reads and validates a config file; a suite naming a "tile_space" takes that file's families
// (errors in it name it).
std::vector<ConfigFamily> read_config_families(const std::string& path);

// A suite's "tile_space", resolved against the suite file's folder (as the generator does).
std::string tile_space_path(const std::string& suite_file, const std::string& tile_space);
// What metadata.config_hash covers: the config file's bytes, then its tile space file's when it
// names one (a changed tile space is another build, so reports of the two do not merge).
std::string config_hash_bytes(const std::string& path);

// Warns on stderr when the config's families differ from the kernels this build compiled:
// --config chooses the problems, the build chooses the kernels. Returns the warning ("" if none).
std::string warn_config_build_mismatch(const std::string& config_path,
                                       const std::vector<ConfigFamily>& families,
                                       const std::vector<KernelEntry>& compiled);

}  // namespace mha
