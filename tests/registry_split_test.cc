// The design registry's two tables (src/designs/registry_entry.h) as a program linking every
// component sees them; tests/core/core_only_test.cc is the program linking dmindex::core alone.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/ucx_component.h"
#include "designs/registry.h"
#include "designs/registry_entry.h"
#include "dmindex/index.h"

namespace dmindex::designs {
namespace {

// The names core answers "link dmindex::baselines" for are exactly the second table's.
TEST(RegistrySplit, BaselinesAreTheNamesCoreKnows) {
  ASSERT_NE(dmindex_baseline_designs, nullptr) << "the tests link every layer, designs_baselines among them";
  std::vector<std::string> names;
  for (const Entry& e : *dmindex_baseline_designs()) names.emplace_back(e.name);
  EXPECT_EQ(names, BaselineDesigns());
}

TEST(RegistrySplit, AProgramLinkingEveryComponentHasEveryDesign) {
  const std::vector<std::string> all = {"local", "naive",  "sherman", "rftree", "dex",       "xstore",
                                        "absl",  "indexy", "rocksdb", "lmdb",   "btree-disk"};
  EXPECT_EQ(Index::Designs(), all);
  IndexOptions options;
  options.design = "lmdb";
  auto index = Index::Open(options);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_TRUE((*index)->Close().ok());
}

TEST(RegistrySplit, MemoryServersAreReachedOverUcx) {
  // dmindex::ucx is linked: a server that is not there is Unavailable, not NotSupported.
  ASSERT_NE(dmindex_ucx_component, nullptr);
  MemoryServers servers;
  servers.addresses = {"127.0.0.1:1"};
  servers.connect_timeout = std::chrono::milliseconds(200);
  auto cluster = Cluster::Open(servers);
  ASSERT_FALSE(cluster.ok());
  EXPECT_NE(cluster.status().code(), Status::Code::kNotSupported) << cluster.status().ToString();
}

}  // namespace
}  // namespace dmindex::designs
