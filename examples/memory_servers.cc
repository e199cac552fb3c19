// Connecting to memory servers: the index lives in the pools of running `dmindex memserver`
// processes, reached over UCX, instead of in this process. Start two, e.g.
//
//   dmindex memserver --listen 127.0.0.1:7000 --size 1G &
//   dmindex memserver --listen 127.0.0.1:7001 --size 1G &
//   memory_servers 127.0.0.1:7000 127.0.0.1:7001
//
//   memory_servers HOST:PORT... [--tcp] [--cluster-key FILE]
//
// --tcp: the servers run with --transport tcp (default shm: shared memory, one machine).
// --cluster-key: the servers' --cluster-key (default ~/.dmindex/cluster-key, which the
// first server created; on several machines, copy it to each).
#include <dmindex/index.h>

#include <cstdlib>
#include <iostream>
#include <string>

namespace {

void Check(const dmindex::Status& s, const std::string& what) {
  if (s.ok()) return;
  std::cerr << "memory_servers: " << what << ": " << s.ToString() << "\n";
  std::exit(1);
}

uint64_t Counter(const dmindex::Cluster& cluster, const char* name) {
  return cluster.GetIntProperty(name).value_or(0);
}

}  // namespace

int main(int argc, char** argv) {
  dmindex::MemoryServers servers;  // memory node i is the i-th address
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--tcp") {
      servers.transport = dmindex::Transport::kTcp;
    } else if (arg == "--cluster-key" && i + 1 < argc) {
      servers.cluster_key_file = argv[++i];
    } else {
      servers.addresses.push_back(arg);
    }
  }
  if (servers.addresses.empty()) {
    std::cerr << "usage: memory_servers HOST:PORT... [--tcp] [--cluster-key FILE]\n";
    return 2;
  }

  // Unavailable if a server does not answer within servers.connect_timeout or refuses our
  // key; InvalidArgument for a malformed address.
  auto cluster = dmindex::Cluster::Open(servers);
  Check(cluster.status(), "connecting to the memory servers");
  std::cout << "connected to " << (*cluster)->memory_nodes() << " memory servers over "
            << (*cluster)->backend() << "\n";

  // An index is found by name in the cluster's catalog (on memory node 0): a second run, or
  // another process, opens the same index and sees these keys.
  dmindex::IndexOptions options;
  options.design = "sherman";
  options.name = "example";
  auto index = dmindex::Index::Open(options, *cluster);
  Check(index.status(), "opening index '" + options.name + "'");

  {
    auto session = (*index)->OpenSession();
    Check(session.status(), "opening a session");
    dmindex::Session& db = **session;

    constexpr uint64_t kKeys = 1000;
    const uint64_t trips_before = Counter(**cluster, "dmindex.fabric.round-trips");
    for (uint64_t key = 1; key <= kKeys; ++key) Check(db.Insert(key, key + 7), "insert");
    for (uint64_t key = 1; key <= kKeys; ++key) {
      uint64_t value = 0;
      Check(db.Lookup(key, &value), "lookup " + std::to_string(key));
      if (value != key + 7) {
        std::cerr << "memory_servers: key " << key << " holds " << value << "\n";
        return 1;
      }
    }
    // What it cost: every verb on the connection is counted (docs/API.md, "Clusters").
    const uint64_t trips = Counter(**cluster, "dmindex.fabric.round-trips") - trips_before;
    std::cout << "wrote and read back " << kKeys << " keys in " << trips
              << " network round trips (" << static_cast<double>(trips) / (2 * kKeys)
              << " per operation)\n";
  }

  // The index stays on the servers after Close: it lives as long as they run (their pools
  // are volatile: a restarted server comes back empty).
  Check((*index)->Close(), "closing the index");
  std::cout << "closed\n";
  return 0;
}
