// `dmindex indexes`: the indexes in the memory servers' catalog (--drop frees one's chunks and slot),
// the leases and node locks held (--locks), and what an operator may
// repair of a DEX index after a compute process died: its host leases (--release-host) and
// the partition map's change lock (--unlock-map).
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "alloc/catalog.h"
#include "designs/dex/dex_admin.h"
#include "tools/commands.h"
#include "tools/fabric_flags.h"
#include "tools/flag_values.h"
#include "tools/lock_listing.h"

namespace dmindex::tools {
namespace {

struct IndexesFlags {
  FabricFlags fabric;
  std::string index;
  int64_t release_host = -1;
  uint64_t token = 0;
  bool unlock_map = false;
  std::string drop;
  bool force = false;
  bool locks = false;
};

[[noreturn]] void Fail(const std::string& message, int code) {
  std::cerr << "dmindex indexes: " << message << "\n";
  throw CLI::RuntimeError(code);
}

void FailIfError(const Status& s, const std::string& what, int code) {
  if (!s.ok()) Fail(what + ": " + s.ToString(), code);
}

void Run(IndexesFlags& f) {
  if (f.fabric.memservers.empty())
    Fail("--memservers is required: the embedded cluster of a new process holds no indexes", 2);
  const bool repair = f.release_host >= 0 || f.unlock_map;
  if (repair && f.index.empty()) Fail("--release-host and --unlock-map need --index", 2);
  if (f.release_host >= 0 && f.token == 0) Fail("--release-host needs --token (as listed)", 2);
  auto fabric = f.fabric.Open();
  FailIfError(fabric.status(), "fabric", 2);
  auto ep = (*fabric)->Connect();
  FailIfError(ep.status(), "fabric", 2);
  if (f.locks) {
    FailIfError(ListLocks(**ep, (*fabric)->memory_nodes(), std::cout), "--locks", 1);
    return;
  }
  if (!f.drop.empty()) {
    FailIfError(alloc::Catalog::Drop(**ep, f.drop, (*fabric)->memory_nodes(), 0, {.force = f.force}), "--drop", 1);
    std::cout << "dropped " << f.drop << " (its chunks went back to the memory servers)\n";
    return;
  }
  if (repair) {
    auto entry = alloc::Catalog::Open(**ep, f.index);
    FailIfError(entry.status(), "--index", 2);
    if (f.unlock_map) {
      FailIfError(designs::dex::UnlockDexMap(**ep, *entry), "--unlock-map", 1);
      std::cout << "unlocked the partition map of " << f.index << "\n";
    }
    if (f.release_host >= 0) {
      FailIfError(designs::dex::ReleaseDexHost(**ep, *entry, static_cast<uint32_t>(f.release_host), f.token),
                  "--release-host", 1);
      std::cout << "released compute node " << f.release_host << " of " << f.index
                << " (writes its dead process had not written back are lost)\n";
    }
    return;
  }
  auto entries = alloc::Catalog::List(**ep);
  FailIfError(entries.status(), "catalog", 1);
  for (const alloc::CatalogEntry& e : *entries) {
    if (!f.index.empty() && e.name != f.index) continue;
    uint64_t root = 0;
    FailIfError((*ep)->Read(e.root_word, &root, 8), "catalog", 1);
    std::cout << e.name << ": " << e.design << ", " << e.node_bytes << "-byte nodes, root "
              << (root == 0 ? std::string("none (empty)") : GlobalAddress::FromRaw(root).ToString()) << "\n";
    if (e.design == "dex") {
      auto described = designs::dex::DescribeDexIndex(**ep, e);
      std::cout << (described.ok() ? *described : "  " + described.status().ToString() + "\n");
    }
  }
  if (entries->empty()) std::cout << "no indexes\n";
}

}  // namespace

void AddIndexesCommand(CLI::App& app) {
  auto f = std::make_shared<IndexesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "indexes", "List the indexes in the memory servers' catalog; repair a DEX index whose "
                 "compute process died (--release-host, --unlock-map)");
  f->fabric.AddTo(*cmd);
  cmd->add_option("--index", f->index, "Only this index (catalog name)");
  AddCount(*cmd, "--release-host", &f->release_host, 0, 63,
           "DEX: free this compute node's host lease, held by a process that died");
  AddParsed(*cmd, "--token", "With --release-host: the dead process's token, as listed (hex)",
            [f](const std::string& text) -> Status {
              // Up to 16 hex digits, not zero (zero marks a free lease).
              const bool hex = !text.empty() && text.size() <= 16 &&
                               text.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
              if (!hex || std::strtoull(text.c_str(), nullptr, 16) == 0)
                return Status::InvalidArgument("'" + text + "': expected the hex token listed");
              f->token = std::strtoull(text.c_str(), nullptr, 16);
              return Status::Ok();
            });
  cmd->add_option("--drop", f->drop,
                  "Drop this index: its chunks go back to the memory servers and its catalog slot "
                  "is freed; refused (naming them) while processes have it open; a drop that stopped "
                  "half-way is finished");
  cmd->add_flag("--force", f->force,
                "With --drop: wait out the leases of holders that stopped renewing (dead or stalled "
                "processes: revoked, they never write again), up to a lease and a quarter; live "
                "holders still refuse the drop");
  cmd->add_flag("--locks", f->locks,
                "List the leases of the processes that take node locks and every node lock held, "
                "with its holder's lease and how long ago that lease was renewed");
  cmd->add_flag("--unlock-map", f->unlock_map,
                "DEX: release the partition map's change lock left by a process that died");
  cmd->callback([f] { Run(*f); });
}

}  // namespace dmindex::tools
