#include "fabric/ucx/memserver_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "common/retry.h"

namespace dmindex::fabric::ucx {
namespace {

constexpr std::string_view kReadyPrefix = "dmindex memserver listening on ";

// Reads one line of the child's stdout, until `deadline`.
Result<std::string> ReadLine(int fd, Clock::time_point deadline) {
  std::string line;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - runtime::Now());
    if (left.count() <= 0) return Status::Unavailable("memory server did not report ready in time");
    pollfd p{fd, POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(left.count()));
    if (rc < 0 && errno != EINTR) return Status::IoError("poll on memory server output failed");
    if (rc <= 0) continue;
    char c;
    ssize_t n = read(fd, &c, 1);
    if (n == 0) return Status::Unavailable("memory server exited before it was ready: " + line);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return Status::IoError("reading memory server output failed");
    }
    if (c == '\n') return line;
    line += c;
  }
}

}  // namespace

Result<std::unique_ptr<MemserverProcess>> MemserverProcess::Start(const MemserverSpec& spec) {
  std::vector<std::string> args = {spec.tool_path,
                                   "memserver",
                                   "--listen",
                                   spec.listen,
                                   "--size",
                                   std::to_string(spec.pool_bytes),
                                   "--chunk-size",
                                   std::to_string(spec.chunk_bytes),
                                   "--rpc-threads",
                                   std::to_string(spec.rpc_threads),
                                   "--transport",
                                   UcxTransportName(spec.transport)};
  if (!spec.cluster_key_file.empty()) {
    args.push_back("--cluster-key");
    args.push_back(spec.cluster_key_file);
  }
  if (!spec.data_dir.empty()) {
    args.push_back("--data-dir");
    args.push_back(spec.data_dir);
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int err = -1;
  if (!spec.stderr_path.empty()) {
    err = open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err < 0) return Status::IoError("cannot open " + spec.stderr_path);
  }
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    if (err >= 0) close(err);
    return Status::IoError("pipe failed");
  }
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(out[0]);
    close(out[1]);
    if (err >= 0) close(err);
    return Status::IoError("fork failed");
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the test or benchmark that started us
    if (getppid() != parent) _exit(126);
    dup2(out[1], STDOUT_FILENO);
    if (err >= 0) dup2(err, STDERR_FILENO);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  if (err >= 0) close(err);
  std::unique_ptr<MemserverProcess> p(new MemserverProcess());
  p->pid_ = pid;
  // UCX logs to stdout too (with UCX_LOG_LEVEL raised): skip what is not our line.
  const auto deadline = runtime::Now() + spec.start_timeout;
  auto line = ReadLine(out[0], deadline);
  while (line.ok() && !line->starts_with(kReadyPrefix)) line = ReadLine(out[0], deadline);
  close(out[0]);  // the server ignores SIGPIPE, should UCX log to stdout later
  if (!line.ok()) {
    if (auto status = p->Wait(std::chrono::milliseconds(500)); status.ok())
      return Status::Unavailable(line.status().message() + " (exit status " +
                                 std::to_string(WIFEXITED(*status) ? WEXITSTATUS(*status) : -1) +
                                 "; its error is on stderr)");
    return line.status();
  }
  auto address = ParseHostPort(std::string_view(*line).substr(kReadyPrefix.size()));
  if (!address.ok()) return address.status();
  p->address_ = *address;
  return p;
}

MemserverProcess::~MemserverProcess() {
  if (pid_ <= 0 || reaped_) return;
  Signal(SIGTERM);
  if (!Wait(std::chrono::seconds(5)).ok()) {
    Signal(SIGKILL);
    (void)Wait(std::chrono::seconds(5));
  }
}

void MemserverProcess::Signal(int signal) const {
  if (pid_ > 0 && !reaped_) kill(pid_, signal);
}

Result<int> MemserverProcess::Wait(std::chrono::milliseconds timeout) {
  // Polls for the exit: the child is ours, so no SIGCHLD handler is needed.
  RetryBudget budget(TimeLimit("polls", timeout, Status::Code::kUnavailable,
                               "the memory server is still running"),
                     "waiting for the memory server's exit");
  Backoff poll(backoff::kPoll, "a memory server's exit");
  while (!reaped_) {
    int status = 0;
    pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      wait_status_ = status;
      break;
    }
    if (r < 0) return Status::IoError("waitpid failed");
    if (!budget.Spend()) return budget.Exhausted("pid " + std::to_string(pid_));
    poll.Pause();
  }
  return wait_status_;
}

Result<std::unique_ptr<UcxFabric>> StartLocalUcxCluster(const MemserverSpec& each,
                                                        uint16_t servers,
                                                        const UcxOptions& client) {
  std::vector<std::shared_ptr<MemserverProcess>> procs;
  std::vector<HostPort> addresses;
  MemserverSpec spec = each;
  if (spec.cluster_key_file.empty()) spec.cluster_key_file = client.cluster_key_file;
  for (uint16_t i = 0; i < servers; ++i) {
    auto p = MemserverProcess::Start(spec);
    if (!p.ok()) return p.status();
    addresses.push_back((*p)->address());
    procs.push_back(std::move(p).value());
  }
  auto fabric = UcxFabric::Create(std::move(addresses), client);
  if (!fabric.ok()) return fabric.status();
  for (auto& p : procs) (*fabric)->Own(p);
  return fabric;
}

}  // namespace dmindex::fabric::ucx
