// Host test of verify --dump's manifest: it records what the output depends on (soft cap, the
// cache's kind, page size and fp8 scales) beside the shape, so that an outside reference needs
// nothing else. An independent check once passed only because the cap was supplied by hand.
#include <gtest/gtest.h>

#include "gpu/problem_data.h"
#include "verify/dump_manifest.h"

namespace mha {
namespace {

TEST(DumpManifest, RecordsEverythingTheOutputDependsOn) {
  Problem p;
  p.shape.name = "gemma_fp8_paged";
  p.shape.batch = 2;
  p.shape.heads = 8;
  p.shape.kv_heads = 4;
  p.shape.depth = 128;
  p.shape.keys = 300;
  p.shape.kv = "paged";
  p.shape.page_size = 16;
  p.shape.kv_dtype = "e4m3";
  p.shape.kv_scale = "head";
  p.shape.soft_cap = 50.0;
  p.lengths = {300, 17};
  const nlohmann::json m = dump_manifest(p);
  EXPECT_EQ(m["soft_cap"], 50.0);
  EXPECT_EQ(m["cache"]["kv"], "paged");
  EXPECT_EQ(m["cache"]["page_size"], 16);
  EXPECT_EQ(m["cache"]["kv_dtype"], "e4m3");
  EXPECT_EQ(m["cache"]["kv_scale"], "head");
  const KvQuantisation q = kv_quantisation(p.shape);
  ASSERT_EQ(m["cache"]["k_scale"].size(), 4u);
  for (size_t h = 0; h < 4; ++h) {
    EXPECT_FLOAT_EQ(m["cache"]["k_scale"][h].get<float>(), q.k_scale[h]);
    EXPECT_FLOAT_EQ(m["cache"]["v_scale"][h].get<float>(), q.v_scale[h]);
  }
  EXPECT_EQ(m["shape"]["max_len"], 300);
  EXPECT_EQ(m["shape"]["group"], 2);
  EXPECT_NEAR(m["scale"].get<double>(), 1 / std::sqrt(128.0), 1e-7);
  p.shape.kv_dtype = "bf16";  // a 16-bit cache: no scales
  p.shape.kv_scale = "";
  EXPECT_TRUE(dump_manifest(p)["cache"]["k_scale"].empty());
}

}  // namespace
}  // namespace mha
