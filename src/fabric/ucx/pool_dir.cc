#include "fabric/ucx/pool_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dmindex::fabric::ucx {
namespace {

std::string Errno() { return std::strerror(errno); }

// The inode of the file mapped at `base` (/proc/self/maps: "start-end perms offset dev inode path").
Result<ino_t> MappedInode(void* base) {
  std::ifstream maps("/proc/self/maps");
  char prefix[32];
  std::snprintf(prefix, sizeof prefix, "%lx-", reinterpret_cast<unsigned long>(base));
  std::string line;
  while (std::getline(maps, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream fields(line);
    std::string range, perms, offset, dev;
    unsigned long inode = 0;
    fields >> range >> perms >> offset >> dev >> inode;
    if (inode == 0) break;
    return static_cast<ino_t>(inode);
  }
  return Status::IoError("UCX's pool segment is not a file mapping at " +
                         std::to_string(reinterpret_cast<uintptr_t>(base)) +
                         " (was it allocated by UCX's posix transport?)");
}

// The descriptor of this process that is open on inode `inode`, not `except`.
Result<int> DescriptorOf(ino_t inode, int except) {
  DIR* fds = opendir("/proc/self/fd");
  if (fds == nullptr) return Status::IoError("cannot list /proc/self/fd: " + Errno());
  int found = -1;
  while (dirent* e = readdir(fds)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    struct stat st{};
    if (*end != '\0' || fd == except || fd == dirfd(fds) || fstat(static_cast<int>(fd), &st) != 0)
      continue;
    if (st.st_ino == inode && S_ISREG(st.st_mode)) found = static_cast<int>(fd);
  }
  closedir(fds);
  if (found < 0) return Status::IoError("UCX keeps no descriptor of its pool segment");
  return found;
}

}  // namespace

Result<std::unique_ptr<PoolDir>> PoolDir::Open(const std::string& dir, uint64_t pool_bytes) {
  if (dir.empty()) return Status::InvalidArgument("--data-dir: empty path");
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) return Status::IoError("cannot create data directory " + dir + ": " + error.message());
  std::unique_ptr<PoolDir> d(new PoolDir());
  const std::string lock_path = dir + "/lock";
  d->lock_fd_ = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (d->lock_fd_ < 0) return Status::IoError("cannot open " + lock_path + ": " + Errno());
  if (flock(d->lock_fd_, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    (void)!pread(d->lock_fd_, pid, sizeof pid - 1, 0);
    return Status::Busy(dir + " is served by a live memory server (pid " +
                        std::string(pid, strcspn(pid, "\n")) + " holds " + lock_path +
                        "): stop it first; two servers on one pool would corrupt it");
  }
  const std::string pid = std::to_string(getpid()) + "\n";
  if (ftruncate(d->lock_fd_, 0) != 0 || pwrite(d->lock_fd_, pid.data(), pid.size(), 0) < 0)
    return Status::IoError("cannot write " + lock_path + ": " + Errno());

  d->pool_path_ = dir + "/pool";
  d->pool_fd_ = open(d->pool_path_.c_str(), O_RDWR | O_CLOEXEC);
  if (d->pool_fd_ < 0 && errno == ENOENT) {
    d->pool_fd_ = open(d->pool_path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    d->created_ = true;
    if (d->pool_fd_ >= 0 && ftruncate(d->pool_fd_, static_cast<off_t>(pool_bytes)) != 0)
      return Status::IoError("cannot size " + d->pool_path_ + ": " + Errno());
  }
  if (d->pool_fd_ < 0) return Status::IoError("cannot open " + d->pool_path_ + ": " + Errno());
  struct stat st{};
  if (fstat(d->pool_fd_, &st) != 0) return Status::IoError("cannot stat " + d->pool_path_ + ": " + Errno());
  if (static_cast<uint64_t>(st.st_size) != pool_bytes)
    return Status::InvalidArgument(d->pool_path_ + " holds a pool of " +
                                   std::to_string(st.st_size) + " bytes, --size asks for " +
                                   std::to_string(pool_bytes) + ": a pool keeps the size it "
                                   "was created with (start with --size " +
                                   std::to_string(st.st_size) + ")");
  return d;
}

PoolDir::~PoolDir() {
  if (pool_fd_ >= 0) close(pool_fd_);
  if (lock_fd_ >= 0) close(lock_fd_);  // and with it the flock
}

Result<void*> PoolDir::Map(uint64_t bytes) const {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, pool_fd_, 0);
  if (p == MAP_FAILED) return Status::IoError("cannot map " + pool_path_ + ": " + Errno());
  return p;
}

Status PoolDir::AdoptUcxSegment(void* base, uint64_t bytes) const {
  auto inode = MappedInode(base);
  if (!inode.ok()) return inode.status();
  auto ucx_fd = DescriptorOf(*inode, pool_fd_);
  if (!ucx_fd.ok()) return ucx_fd.status();
  // The descriptor first: from here on a client that attaches gets the file. Nothing has
  // attached yet: the server does not answer handshakes before it is created.
  if (dup3(pool_fd_, *ucx_fd, O_CLOEXEC) < 0)
    return Status::IoError("cannot put " + pool_path_ + " under UCX's segment: " + Errno());
  if (mmap(base, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, pool_fd_, 0) == MAP_FAILED)
    return Status::IoError("cannot map " + pool_path_ + " at UCX's segment: " + Errno());
  return Status::Ok();
}

}  // namespace dmindex::fabric::ucx
