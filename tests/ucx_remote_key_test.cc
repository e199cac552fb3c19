// A memory server's pool key unpacked without UCX's crash on a server that just died
// (fabric/ucx/remote_key.h): the key's posix record is found by its content, a dead
// server's key is Unavailable before UCX sees it, a live one maps the pool.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "fabric/ucx/bootstrap.h"
#include "fabric/ucx/cluster_key.h"
#include "fabric/ucx/memserver_process.h"
#include "fabric/ucx/remote_key.h"
#include "fabric/ucx/ucx_context.h"
#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx {
namespace {

constexpr uint64_t kProcLink = uint64_t{1} << 63;

// A packed key shaped as UCX packs one: a map word, a type byte, then per transport a size
// byte and its record; the posix record is {segment id, address, length}.
std::vector<std::byte> FakeKey(uint64_t segment_id, uint64_t address, uint64_t length) {
  std::vector<std::byte> key(10, std::byte{0x5a});
  key.push_back(std::byte{24});
  const uint64_t record[] = {segment_id, address, length};
  const auto* bytes = reinterpret_cast<const std::byte*>(record);
  key.insert(key.end(), bytes, bytes + sizeof record);
  key.push_back(std::byte{0});
  return key;
}

uint64_t ProcLinkId(uint64_t pid, uint64_t fd) { return kProcLink | pid | (fd << 30); }

TEST(UcxRemoteKey, FindsThePosixRecordByItsContent) {
  const uint64_t base = 0x7f0000000000, bytes = 32ull << 20;
  EXPECT_EQ(FindProcLinkedSegment(FakeKey(ProcLinkId(1234, 11), base, bytes), base, bytes), 11);
  // Another address, a shorter segment or no /proc link: not the pool's record.
  EXPECT_EQ(FindProcLinkedSegment(FakeKey(ProcLinkId(1234, 11), base + 4096, bytes), base, bytes), -1);
  EXPECT_EQ(FindProcLinkedSegment(FakeKey(ProcLinkId(1234, 11), base, bytes / 2), base, bytes), -1);
  EXPECT_EQ(FindProcLinkedSegment(FakeKey(0x1234, base, bytes), base, bytes), -1);
  // Two candidates: a layout this code does not know, so the key is left alone.
  auto twice = FakeKey(ProcLinkId(1234, 11), base, bytes);
  auto again = FakeKey(ProcLinkId(1234, 12), base, bytes);
  twice.insert(twice.end(), again.begin(), again.end());
  EXPECT_EQ(FindProcLinkedSegment(twice, base, bytes), -1);
}

TEST(UcxRemoteKey, ADeadOwnersKeyIsUnavailableBeforeUcxSeesIt) {
  // A pid that no longer runs: a child that exited and was reaped. Descriptor numbers this
  // high are never open, so a reused pid cannot make the link exist either.
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  const uint64_t base = 0x7f0000000000, bytes = 32ull << 20;
  const auto key = FakeKey(ProcLinkId(static_cast<uint64_t>(child), 1000000), base, bytes);
  // No endpoint: UCX must not be reached at all.
  auto rkey = UnpackPoolKey(nullptr, key, base, bytes, "test-server");
  ASSERT_FALSE(rkey.ok());
  EXPECT_TRUE(rkey.status().IsUnavailable()) << rkey.status().ToString();
  EXPECT_NE(rkey.status().message().find("went away"), std::string::npos) << rkey.status().ToString();
}

// The race UcxProcessTest.ServerKilledMidRun* met under load, made deterministic: a welcome
// received from a server that is then killed, its key unpacked afterwards (on an endpoint
// to a second, live server, as another of the process's endpoints would be).
TEST(UcxRemoteKey, AKeyOfAServerKilledAfterItsWelcomeIsUnavailableNotACrash) {
  MemserverSpec spec;
  spec.tool_path = DMINDEX_TOOL_PATH;
  spec.pool_bytes = 32ull << 20;
  auto doomed = MemserverProcess::Start(spec);
  auto live = MemserverProcess::Start(spec);
  ASSERT_TRUE(doomed.ok()) << doomed.status().ToString();
  ASSERT_TRUE(live.ok()) << live.status().ToString();

  UcxContextOptions co;
  auto context = UcxContext::Create(co);
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  auto worker = UcxWorker::Create(**context);
  ASSERT_TRUE(worker.ok()) << worker.status().ToString();
  auto key = ClusterKey::Load("");
  ASSERT_TRUE(key.ok()) << key.status().ToString();
  const auto timeout = std::chrono::milliseconds(5000);
  auto welcome = [&](MemserverProcess& s, uint16_t node) {
    return Handshake(s.address(), *key, node, wire::ConnectionKind::kEndpoint, UcxTransport::kShm,
                     (*worker)->address(), timeout);
  };
  auto from_doomed = welcome(**doomed, 0);
  auto from_live = welcome(**live, 1);
  ASSERT_TRUE(from_doomed.ok()) << from_doomed.status().ToString();
  ASSERT_TRUE(from_live.ok()) << from_live.status().ToString();
  auto ep = (*worker)->Connect(from_live->worker_address, (*context)->err_mode(), nullptr, nullptr);
  ASSERT_TRUE(ep.ok()) << ep.status().ToString();

  // The live server's key: found where this UCX version packs it, naming the server's pid,
  // and mapped through this process's own descriptor.
  const int64_t at = FindProcLinkedSegment(from_live->rkey, from_live->pool_base, from_live->pool_bytes);
  ASSERT_GE(at, 0) << "UCX's posix key no longer holds {segment id, address, length}";
  uint64_t id = 0;
  std::memcpy(&id, from_live->rkey.data() + at, sizeof id);
  EXPECT_EQ(id & ((uint64_t{1} << 30) - 1), static_cast<uint64_t>((*live)->pid()));
  auto good = UnpackPoolKey(*ep, from_live->rkey, from_live->pool_base, from_live->pool_bytes, "live");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  void* mapped = nullptr;
  EXPECT_EQ(ucp_rkey_ptr(*good, from_live->pool_base, &mapped), UCS_OK);
  ucp_rkey_destroy(*good);

  (*doomed)->Signal(SIGKILL);
  ASSERT_TRUE((*doomed)->Wait(std::chrono::milliseconds(10000)).ok());
  // UCX must not be handed the key: where it is (UCX 1.13), its failed unpack releases a
  // transport key it never unpacked - garbage, logged as a failed munmap, or a crash.
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  auto dead = UnpackPoolKey(*ep, from_doomed->rkey, from_doomed->pool_base, from_doomed->pool_bytes, "doomed");
  const std::string said = testing::internal::GetCapturedStdout() + testing::internal::GetCapturedStderr();
  EXPECT_EQ(said.find("UCX"), std::string::npos) << said;
  ASSERT_FALSE(dead.ok());
  EXPECT_TRUE(dead.status().IsUnavailable()) << dead.status().ToString();
  (*worker)->Close(*ep, true, std::chrono::milliseconds(1000));
}

}  // namespace
}  // namespace dmindex::fabric::ucx
