// What a newcomer meets first, on every design: the default IndexOptions (byte keys, nodes
// sized from the key limits) open and work; and IndexOptions::name, create_if_missing,
// directory and the stored key format mean the same everywhere, or are refused with a reason.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "dmindex/index.h"
#include "test_fabrics.h"

namespace dmindex {
namespace {

std::string Key(int i) {
  char buf[16];
  snprintf(buf, sizeof buf, "user%05d", i);
  return buf;
}

// Where each design keeps an index (options.h, "name" .. "directory"): the test's own
// statement of the contract, not read from the registry.
enum class Home { kPool, kProcess, kDirectory };

Home HomeOf(const std::string& design) {
  if (design == "rocksdb" || design == "lmdb") return Home::kDirectory;
  if (design == "local" || design == "absl" || design == "indexy" || design == "btree-disk") return Home::kProcess;
  return Home::kPool;
}

// A fresh folder under the test's temporary directory, removed at the end.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "/dmindex-api-XXXXXX";
    path_ = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class ApiDefaultsTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    EmbeddedCluster e;
    e.pool_bytes = 256ull << 20;
    auto c = Cluster::Open(e);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    cluster_ = std::move(c).value();
  }

  IndexOptions Options(const std::string& name) const {
    IndexOptions o;  // every other field at its default
    o.design = GetParam();
    o.name = name;
    return o;
  }

  // Opens, checks and closes; the keys [0, keys) with values "v<i>" must be present.
  void ExpectKeys(const IndexOptions& o, int keys) {
    auto index = Index::Open(o, cluster_);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    {
      auto session = (*index)->OpenSession();
      ASSERT_TRUE(session.ok()) << session.status().ToString();
      for (int i = 0; i < keys; ++i) {
        std::string v;
        ASSERT_TRUE((*session)->Lookup(Key(i), &v).ok()) << GetParam() << " lost " << Key(i);
        EXPECT_EQ(v, "v" + std::to_string(i));
      }
    }
    ASSERT_TRUE((*index)->Close().ok());
  }

  void Write(const IndexOptions& o, int keys) {
    auto index = Index::Open(o, cluster_);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    {
      auto session = (*index)->OpenSession();
      ASSERT_TRUE(session.ok()) << session.status().ToString();
      for (int i = 0; i < keys; ++i) ASSERT_TRUE((*session)->Insert(Key(i), "v" + std::to_string(i)).ok());
    }
    ASSERT_TRUE((*index)->Close().ok());
  }

  std::shared_ptr<Cluster> cluster_;
};

TEST_P(ApiDefaultsTest, DefaultOptionsTakeByteKeys) {
  auto index = Index::Open(Options("defaults"), cluster_);
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  EXPECT_EQ((*index)->options().key_format, KeyFormat::kBytes);
  EXPECT_GE((*index)->options().node_bytes, 1024u) << "the size chosen is shown";
  {
    auto opened = (*index)->OpenSession();
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    Session& s = **opened;
    constexpr int kKeys = 600;
    for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(s.Insert(Key(i), "v" + std::to_string(i)).ok()) << i;
    const std::string longest(255, 'k');  // the default key limit
    ASSERT_TRUE(s.Insert(longest, std::string(1000, 'x')).ok());
    std::string v;
    ASSERT_TRUE(s.Lookup(Key(421), &v).ok());
    EXPECT_EQ(v, "v421");
    ASSERT_TRUE(s.Lookup(longest, &v).ok());
    EXPECT_EQ(v, std::string(1000, 'x'));
    ASSERT_TRUE(s.Update(Key(7), "seven").ok());
    for (int i = 0; i < kKeys; i += 2) ASSERT_TRUE(s.Delete(Key(i)).ok()) << i;
    EXPECT_TRUE(s.Lookup(Key(4), &v).IsNotFound());

    // The odd keys of [user00100, user00200), in order, and nothing past the bound.
    ReadOptions ro;
    ro.upper_bound = Key(200);
    Iterator it = s.NewIterator(ro);
    std::vector<std::string> seen;
    for (it.Seek(Key(100)); it.Valid(); it.Next()) seen.emplace_back(it.key());
    ASSERT_TRUE(it.status().ok()) << it.status().ToString();
    ASSERT_EQ(seen.size(), 50u);
    EXPECT_EQ(seen.front(), Key(101));
    EXPECT_EQ(seen.back(), Key(199));
  }
  ASSERT_TRUE((*index)->Close().ok());
}

TEST_P(ApiDefaultsTest, NamesCreateIfMissingAndDirectoriesMeanTheSameOnEveryDesign) {
  const Home home = HomeOf(GetParam());
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  IndexOptions o = Options("named");
  if (home == Home::kDirectory) o.directory = dir.path();

  IndexOptions missing = Options("absent");
  missing.create_if_missing = false;
  IndexOptions elsewhere = Options("named");
  elsewhere.directory = dir.path();
  if (home == Home::kPool) {
    Status s = Index::Open(missing, cluster_).status();
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    s = Index::Open(elsewhere, cluster_).status();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find("memory pool"), std::string::npos) << s.ToString();
  } else if (home == Home::kProcess) {
    Status s = Index::Open(missing, cluster_).status();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find("none outlives"), std::string::npos) << s.ToString();
    s = Index::Open(elsewhere, cluster_).status();
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.message().find("directory"), std::string::npos) << s.ToString();
    return;  // nothing outlives the Index object: there is no reopen to test
  } else {
    Status s = Index::Open(missing, cluster_).status();
    EXPECT_TRUE(s.IsInvalidArgument()) << "no directory: " << s.ToString();
    missing.directory = dir.path();
    s = Index::Open(missing, cluster_).status();
    EXPECT_TRUE(s.IsNotFound()) << s.ToString();
    EXPECT_FALSE(std::filesystem::exists(dir.path() + "/absent")) << "a failed open creates nothing";
  }

  Write(o, 300);
  IndexOptions existing = o;
  existing.create_if_missing = false;
  ExpectKeys(existing, 300);  // reopened by name, with its data

  IndexOptions u64 = existing;
  u64.key_format = KeyFormat::kU64;
  Status s = Index::Open(u64, cluster_).status();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("bytes"), std::string::npos) << "names the stored format: " << s.ToString();
  IndexOptions shorter = existing;
  shorter.max_key_bytes = 100;
  EXPECT_TRUE(Index::Open(shorter, cluster_).status().IsInvalidArgument());
  ExpectKeys(existing, 300);  // the refused opens changed nothing
}

TEST(ApiDefaults, StoreDirectoriesRefuseWhatIsNotTheirs) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  std::filesystem::create_directories(dir.path() + "/photos");
  std::ofstream(dir.path() + "/photos/cat.jpg") << "not an index";
  for (const char* design : {"rocksdb", "lmdb"}) {
    IndexOptions o;
    o.design = design;
    o.directory = dir.path();
    o.name = "photos";
    Status s = Index::Open(o).status();
    EXPECT_TRUE(s.IsInvalidArgument()) << design << ": " << s.ToString();
    EXPECT_TRUE(std::filesystem::exists(dir.path() + "/photos/cat.jpg")) << "lose nothing";
    for (const char* bad : {"", "..", "a/b"}) {
      o.name = bad;
      s = Index::Open(o).status();
      EXPECT_TRUE(s.IsInvalidArgument()) << design << " '" << bad << "': " << s.ToString();
    }
    // The knobs that place a temporary store contradict a named directory.
    o.name = "ok";
    o.knobs = {{"y_keep", "on"}};
    EXPECT_TRUE(Index::Open(o).status().IsInvalidArgument()) << design;
  }
  // Another design under a store's name: refused, naming what is stored.
  IndexOptions r;
  r.design = "rocksdb";
  r.directory = dir.path();
  r.name = "shared";
  {
    auto index = Index::Open(r);
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    ASSERT_TRUE((*index)->Close().ok());
  }
  r.design = "lmdb";
  Status s = Index::Open(r).status();
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("rocksdb"), std::string::npos) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(Designs, ApiDefaultsTest, ::testing::ValuesIn(Index::Designs()),
                         testing::FabricParamName());

}  // namespace
}  // namespace dmindex
