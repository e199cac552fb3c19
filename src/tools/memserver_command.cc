// `dmindex memserver`: runs one memory server of the UCX fabric until SIGINT/SIGTERM.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "common/parse_values.h"
#include "fabric/ucx/ucx_memory_server.h"
#include "designs/registry.h"
#include "dmindex/global_address.h"
#include "fabric/pool_layout.h"
#include "tools/commands.h"
#include "tools/fabric_flags.h"
#include "tools/flag_values.h"

namespace dmindex::tools {
namespace {

struct MemserverFlags {
  std::string listen;
  std::string size = "4G";
  std::string chunk_size;  // empty: ChunkBytesFor(size)
  uint32_t rpc_threads = 1;
  std::string transport = "shm";
  std::string cluster_key;
  std::string data_dir;
  bool sync = false;
  uint32_t sync_period_ms = 1000;
};

// Indexes take the pool in chunks after its superblock (fabric/pool_layout.h); a chunk that
// does not fit whole is lost. So a pool holds at least kMinChunks of them, and by default
// chunks are 32 MiB or, in a small pool, an eighth of its chunk area (64M: 8 MiB chunks, 7
// usable, where 32 MiB chunks left one).
constexpr uint64_t kMinChunks = 4;

uint64_t ChunkBytesFor(uint64_t pool_bytes) {
  const uint64_t eighth = (pool_bytes - fabric::kChunkAreaOffset) / 8 / 4096 * 4096;
  return std::max<uint64_t>(4096, std::min(fabric::kDefaultChunkBytes, eighth));
}

Status CheckChunks(uint64_t pool_bytes, uint64_t chunk_bytes) {
  const uint64_t chunks = (pool_bytes - fabric::kChunkAreaOffset) / chunk_bytes;
  if (chunks >= kMinChunks) return Status::Ok();
  return Status::InvalidArgument("--size " + std::to_string(pool_bytes >> 20) + " MiB holds " + std::to_string(chunks) +
                                 " whole chunk(s) of --chunk-size " + std::to_string(chunk_bytes >> 10) +
                                 " KiB after its superblock; the rest would be lost. Give at most " +
                                 std::to_string((pool_bytes - fabric::kChunkAreaOffset) / kMinChunks / 4096 * 4) +
                                 " KiB (or leave --chunk-size out: it is sized from --size)");
}

// A pool is memory of this machine (UCX registers all of it, shared memory for shm): one
// larger than the machine's memory can never be used, and registering it takes so long that
// the server would sit deaf to SIGTERM (its stop signals are blocked from the start).
Status CheckPoolFits(uint64_t pool_bytes) {
  const long pages = sysconf(_SC_PHYS_PAGES), page_bytes = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return Status::Ok();  // unknown: let UCX decide
  const uint64_t memory = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_bytes);
  if (pool_bytes <= memory) return Status::Ok();
  return Status::InvalidArgument("--size " + std::to_string(pool_bytes >> 20) + " MiB is more than this machine's memory (" +
                                 std::to_string(memory >> 20) + " MiB)");
}

[[noreturn]] void Fail(const Status& s) {
  std::cerr << "dmindex memserver: error: " << s.ToString() << std::endl;
  throw CLI::RuntimeError(2);
}

void RunMemserver(const MemserverFlags& flags) {
  fabric::ucx::UcxServerOptions o;
  o.listen = flags.listen;
  auto size = ParseByteSize(flags.size);
  if (!size.ok()) Fail(Status::InvalidArgument("--size: " + size.status().message()));
  auto chunk = flags.chunk_size.empty() ? Result<uint64_t>(ChunkBytesFor(*size)) : ParseByteSize(flags.chunk_size);
  if (!chunk.ok()) Fail(Status::InvalidArgument("--chunk-size: " + chunk.status().message()));
  if (Status s = CheckChunks(*size, *chunk); !s.ok()) Fail(s);
  if (Status s = CheckPoolFits(*size); !s.ok()) Fail(s);
  auto transport = fabric::ucx::ParseUcxTransport(flags.transport);
  if (!transport.ok()) Fail(Status::InvalidArgument("--transport: " + transport.status().message()));
  o.pool_bytes = *size;
  o.node.chunk_bytes = *chunk;
  o.node.rpc_threads = flags.rpc_threads;
  o.transport = *transport;
  o.cluster_key_file = flags.cluster_key;
  o.data_dir = flags.data_dir;
  if (flags.sync && flags.data_dir.empty())
    Fail(Status::InvalidArgument("--sync needs --data-dir: a volatile pool has no file to sync"));
  if (flags.sync) o.sync_period = std::chrono::milliseconds(flags.sync_period_ms);

  // Every thread (ours and UCX's) inherits this mask, so SIGINT/SIGTERM reach only the
  // sigwait below and shutdown is orderly. SIGPIPE: a client vanishing mid-send is routine.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  auto server = fabric::ucx::UcxMemoryServer::Create(o);
  if (!server.ok()) Fail(server.status());
  // Designs' server-side RPC handlers (DEX offload, later XStore writes), before serving.
  Status handlers = designs::RegisterMemoryNodeHandlers((*server)->node());
  if (!handlers.ok()) Fail(handlers);
  Status started = (*server)->Start();
  if (!started.ok()) Fail(started);
  if (!o.data_dir.empty())
    std::fprintf(stderr, "dmindex memserver: %s %s in %s/pool%s\n",
                 (*server)->restored() ? "restored" : "created",
                 (*server)->node().identity().ToString().c_str(), o.data_dir.c_str(),
                 flags.sync ? ", synced to disk periodically" : "");
  std::printf("dmindex memserver listening on %s\n", (*server)->address().ToString().c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "dmindex memserver %s: stopping on %s\n",
               (*server)->address().ToString().c_str(), sig == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->Stop();
}

}  // namespace

void AddMemserverCommand(CLI::App& app) {
  auto flags = std::make_shared<MemserverFlags>();
  CLI::App* cmd = app.add_subcommand(
      "memserver", "Run a memory server of the UCX fabric (until SIGINT/SIGTERM)");
  cmd->add_option("--listen", flags->listen, "HOST:PORT to accept clients on (port 0: any free)")
      ->required();
  AddParsed(*cmd, "--size", "Pool size, e.g. 4G, 512M (default " + flags->size + ")",
            [flags](const std::string& text) -> Status {
              auto bytes = ParseByteSize(text, fabric::kMinPoolBytes, GlobalAddress::kOffsetMask);
              if (bytes.ok()) flags->size = text;
              return bytes.status();
            });
  AddParsed(*cmd, "--chunk-size", "Chunk size handed out by RPC, a multiple of 4K, e.g. 32M "
                                  "(default 32M, or an eighth of a smaller pool; the pool must hold " +
                                      std::to_string(kMinChunks) + ")",
            [flags](const std::string& text) -> Status {
              auto bytes = ParseByteSize(text, 4096, GlobalAddress::kOffsetMask);
              if (bytes.ok() && *bytes % 4096 != 0)
                return Status::InvalidArgument("'" + text + "': expected a multiple of 4096 bytes");
              if (bytes.ok()) flags->chunk_size = text;
              return bytes.status();
            });
  AddCount(*cmd, "--rpc-threads", &flags->rpc_threads, 1, 64, "RPC handler threads (weak cores; default 1)");
  cmd->add_option("--transport", flags->transport, "UCX transport: shm or tcp")
      ->capture_default_str()
      ->check(CLI::IsMember({"shm", "tcp"}));
  AddClusterKeyFlag(*cmd, &flags->cluster_key);
  cmd->add_option("--data-dir", flags->data_dir,
                  "Keep the pool in DIR/pool, so that it outlives this process: restarted on the "
                  "same DIR, the server serves the same indexes (default: a volatile pool)");
  cmd->add_flag("--sync", flags->sync,
                "With --data-dir: write the pool to disk every --sync-period (and at a clean "
                "shutdown), bounding what a machine crash loses");
  AddDuration(*cmd, "--sync-period", &flags->sync_period_ms, 1e-3, RealRange{1, 3.6e6},
              "How often --sync writes the pool to disk (default 1s)");
  cmd->callback([flags] { RunMemserver(*flags); });
}

}  // namespace dmindex::tools
