// A program that links dmindex::core (and its C API, dmindex::c) and nothing else: the
// in-memory designs work; the designs of dmindex::baselines and the memory servers of
// dmindex::ucx answer NotSupported naming the target to link, instead of failing at link time
// (docs/C_API.md, "What a program links"). CoreOnly.LinksNoLibraryOfTheOtherComponents checks
// this binary's shared libraries.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include <dmindex/c.h>
#include <dmindex/index.h>

namespace dmindex {
namespace {

const std::vector<std::string> kCoreDesigns = {"local", "naive", "sherman", "rftree", "dex", "xstore"};
const std::vector<std::string> kBaselineDesigns = {"absl", "indexy", "rocksdb", "lmdb", "btree-disk"};

TEST(CoreOnly, DesignsAreTheInMemoryOnes) { EXPECT_EQ(Index::Designs(), kCoreDesigns); }

TEST(CoreOnly, EveryInMemoryDesignWorks) {
  auto cluster = Cluster::Open();
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  for (const std::string& design : kCoreDesigns) {
    IndexOptions options;
    options.design = design;
    options.name = "core-" + design;
    auto index = Index::Open(options, *cluster);
    ASSERT_TRUE(index.ok()) << design << ": " << index.status().ToString();
    {
      auto session = (*index)->OpenSession();
      ASSERT_TRUE(session.ok()) << design << ": " << session.status().ToString();
      ASSERT_TRUE((*session)->Insert("user1", "one").ok()) << design;
      ASSERT_TRUE((*session)->Insert("user2", "two").ok()) << design;
      std::string value;
      ASSERT_TRUE((*session)->Lookup("user2", &value).ok()) << design;
      EXPECT_EQ(value, "two") << design;
      EXPECT_EQ((*session)->Lookup("user3", &value).code(), Status::Code::kNotFound) << design;
    }
    EXPECT_TRUE((*index)->Close().ok()) << design;
  }
}

TEST(CoreOnly, ABaselineIsNotSupportedNamingTheTargetToLink) {
  for (const std::string& design : kBaselineDesigns) {
    IndexOptions options;
    options.design = design;
    auto index = Index::Open(options);
    ASSERT_FALSE(index.ok()) << design;
    EXPECT_EQ(index.status().code(), Status::Code::kNotSupported) << design;
    EXPECT_EQ(index.status().message(),
              "design " + design + " is not linked into this program; link dmindex::baselines");
  }
}

TEST(CoreOnly, AnUnknownDesignIsStillInvalidArgument) {
  IndexOptions options;
  options.design = "no-such-design";
  auto index = Index::Open(options);
  ASSERT_FALSE(index.ok());
  EXPECT_EQ(index.status().code(), Status::Code::kInvalidArgument);
  EXPECT_NE(index.status().message().find("known: local, naive, sherman, rftree, dex, xstore)"), std::string::npos)
      << index.status().ToString();
}

TEST(CoreOnly, MemoryServersAreNotSupportedNamingTheTargetToLink) {
  MemoryServers servers;
  servers.addresses = {"127.0.0.1:7000"};
  auto cluster = Cluster::Open(servers);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), Status::Code::kNotSupported);
  EXPECT_NE(cluster.status().message().find("link dmindex::ucx"), std::string::npos) << cluster.status().ToString();
}

// The C API over dmindex::core says the same through its codes and messages.
TEST(CoreOnly, TheCApiSaysTheSame) {
  char* designs = dmindex_designs();
  ASSERT_NE(designs, nullptr);
  EXPECT_STREQ(designs, "local\nnaive\nsherman\nrftree\ndex\nxstore");
  dmindex_free(designs);

  dmindex_status_t* status = dmindex_status_create();
  const char* addresses[] = {"127.0.0.1:7000"};
  dmindex_cluster_t* cluster = nullptr;
  EXPECT_EQ(dmindex_cluster_connect(addresses, 1, "shm", nullptr, 0, 0, &cluster, status), DMINDEX_NOT_SUPPORTED);
  EXPECT_EQ(cluster, nullptr);
  EXPECT_NE(std::string(dmindex_status_message(status)).find("link dmindex::ucx"), std::string::npos);
  dmindex_status_destroy(status);
}

}  // namespace
}  // namespace dmindex
