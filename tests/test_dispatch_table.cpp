// The compiled registry against the generator's manifest (${build}/generated/manifest.json):
// the same instances, in the same order, with equal traits and shared-memory sizes.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "registry/kernel_registry.h"

namespace {

nlohmann::json load_manifest() {
  std::ifstream in(MHA_MANIFEST_PATH);
  if (!in) throw std::runtime_error("cannot open " MHA_MANIFEST_PATH);
  return nlohmann::json::parse(in);
}

TEST(DispatchTable, RegistryHasExactlyTheManifestInstances) {
  const auto manifest = load_manifest();
  const auto& instances = manifest.at("instances");
  const auto& registry = mha::kernel_registry();
  ASSERT_FALSE(registry.empty());
  ASSERT_EQ(registry.size(), instances.size());
  for (size_t i = 0; i < registry.size(); ++i) {
    EXPECT_EQ(registry[i].name, instances[i].at("name").get<std::string>()) << "entry " << i;
  }
}

TEST(DispatchTable, TraitsAndSmemMatchTheManifest) {
  const auto manifest = load_manifest();
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& inst : manifest.at("instances")) {
    by_name[inst.at("name").get<std::string>()] = inst.at("traits");
  }
  for (const auto& e : mha::kernel_registry()) {
    SCOPED_TRACE(e.name);
    auto it = by_name.find(e.name);
    ASSERT_NE(it, by_name.end()) << "not in the manifest";
    const auto& t = it->second;
    EXPECT_EQ(e.traits.dtype, t.at("dtype").get<std::string>());
    EXPECT_EQ(e.traits.out_dtype, t.at("out_dtype").get<std::string>());
    EXPECT_EQ(e.traits.depth, t.at("depth").get<int>());
    EXPECT_EQ(e.traits.group, t.at("group").get<int>());
    EXPECT_EQ(e.traits.kv, t.at("kv").get<std::string>());
    EXPECT_EQ(e.traits.mask, t.at("mask").get<std::string>());
    EXPECT_EQ(e.traits.has_sink, t.at("has_sink").get<bool>());
    EXPECT_EQ(e.traits.bm, t.at("bm").get<int>());
    EXPECT_EQ(e.traits.bn, t.at("bn").get<int>());
    EXPECT_EQ(e.traits.bk, t.at("bk").get<int>());
    EXPECT_EQ(e.traits.wm, t.at("wm").get<int>());
    EXPECT_EQ(e.traits.wn, t.at("wn").get<int>());
    EXPECT_EQ(e.traits.threads, t.at("threads").get<int>());
    EXPECT_EQ(e.traits.stages, t.at("stages").get<int>());
    EXPECT_EQ(e.traits.warp_split_k, t.at("warp_split_k").get<bool>());
    EXPECT_EQ(e.traits.smem_bytes, t.at("smem_bytes").get<int>());
    EXPECT_NE(e.launch, nullptr);
  }
}

TEST(DispatchTable, NamesAreUnique) {
  std::map<std::string, int> count;
  for (const auto& e : mha::kernel_registry()) ++count[e.name];
  for (const auto& [name, n] : count) EXPECT_EQ(n, 1) << name;
}

}  // namespace
