// Quick start: an index on an embedded cluster (memory nodes inside this process), the
// four point operations, and a clean close. Every dmindex call returns a Status (or a
// Result: a value or the Status saying why there is none); this program checks each one.
//
//   quick_start [design]        design: any of dmindex::Index::Designs() (default sherman):
//                               local, naive, sherman, rftree, dex, xstore; linked against
//                               dmindex::dmindex instead of dmindex::core, also absl, indexy,
//                               rocksdb, lmdb, btree-disk (docs/C_API.md, "What a program links")
#include <dmindex/index.h>

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

// Prints what failed and why, and ends the program.
void Check(const dmindex::Status& s, const std::string& what) {
  if (s.ok()) return;
  std::cerr << "quick_start: " << what << ": " << s.ToString() << "\n";
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  // An embedded cluster: two memory nodes of 256 MiB each, reserved and touched only as used.
  // Cluster::Open(dmindex::MemoryServers{...}) connects to `dmindex memserver` processes
  // instead (memory_servers.cc); nothing else in the program changes.
  dmindex::EmbeddedCluster embedded;
  embedded.memory_nodes = 2;
  embedded.pool_bytes = 256ull << 20;
  auto cluster = dmindex::Cluster::Open(embedded);
  Check(cluster.status(), "opening the embedded cluster");

  // The index "quick-start" of the chosen design, created because it does not exist yet.
  dmindex::IndexOptions options;
  options.design = argc > 1 ? argv[1] : "sherman";
  options.name = "quick-start";
  auto index = dmindex::Index::Open(options, *cluster);
  Check(index.status(), "opening index '" + options.name + "' (" + options.design + ")");

  {
    // One session per thread; sessions are not thread-safe, the index is.
    auto session = (*index)->OpenSession();
    Check(session.status(), "opening a session");
    dmindex::Session& db = **session;

    // Keys and values are byte strings (the default key format: keys of 1 to 255 bytes).
    for (int i = 1; i <= 100; ++i)
      Check(db.Insert("key" + std::to_string(i), "value " + std::to_string(i * 10)), "insert");

    std::string value;
    Check(db.Lookup("key42", &value), "lookup key42");
    std::cout << "key42 -> " << value << "\n";

    Check(db.Update("key42", "4242"), "update key42");  // Update: NotFound if the key is absent
    Check(db.Lookup("key42", &value), "lookup key42 after the update");
    std::cout << "key42 -> " << value << " after the update\n";

    Check(db.Delete("key42"), "delete key42");
    dmindex::Status gone = db.Lookup("key42", &value);  // an absent key is NotFound, not an error
    if (!gone.IsNotFound()) {
      std::cerr << "quick_start: lookup key42 after the delete: " << gone.ToString() << "\n";
      return 1;
    }
    std::cout << "key42 is gone after the delete\n";

    dmindex::Status bad = db.Insert("", "v");  // an empty key is refused, with a reason
    std::cout << "inserting an empty key: " << bad.ToString() << "\n";
    if (!bad.IsInvalidArgument()) return 1;
  }  // the session closes here: Close() refuses while sessions are open

  // Close reports what failed (DEX writes its cached writes back here); the destructor
  // would close silently.
  Check((*index)->Close(), "closing the index");
  std::cout << "closed\n";
  return 0;
}
