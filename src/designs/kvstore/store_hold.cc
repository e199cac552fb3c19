#include "designs/kvstore/store_hold.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <utility>

namespace dmindex::designs {
namespace {

// The whole file's lock, of `type` (F_RDLCK, F_WRLCK); `wait`: F_OFD_SETLKW.
int LockWhole(int fd, short type, bool wait) {
  struct flock lock {};
  lock.l_type = type;
  lock.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file; l_pid must be 0 for OFD locks
  int rc;
  do rc = fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &lock);
  while (rc != 0 && errno == EINTR);
  return rc;
}

std::string Errno(const char* what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

}  // namespace

StoreHold::StoreHold(StoreHold&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      exclusive_(std::exchange(other.exclusive_, false)),
      home_(std::move(other.home_)) {}

StoreHold& StoreHold::operator=(StoreHold&& other) noexcept {
  if (this != &other) {
    Release();
    fd_ = std::exchange(other.fd_, -1);
    exclusive_ = std::exchange(other.exclusive_, false);
    home_ = std::move(other.home_);
  }
  return *this;
}

Result<StoreHold> StoreHold::Take(const std::string& home) {
  const std::string path = (std::filesystem::path(home) / kStoreHoldFile).string();
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == ENOENT) return Status::Aborted(home + " was dropped while it was being opened");
    return Status::IoError(Errno("cannot open", path));
  }
  StoreHold hold(fd, home);
  if (LockWhole(fd, F_RDLCK, /*wait=*/true) != 0) return Status::IoError(Errno("cannot lock", path));
  struct stat st {};
  if (fstat(fd, &st) != 0) return Status::IoError(Errno("cannot stat", path));
  // A drop held the file while we waited and has removed it: the index we looked up is gone.
  if (st.st_nlink == 0) return Status::Aborted(home + " was dropped while it was being opened");
  return hold;
}

Status StoreHold::MakeExclusive() {
  if (fd_ < 0) return Status::InvalidArgument("the index's folder is not held");
  if (exclusive_) return Status::Ok();
  if (LockWhole(fd_, F_WRLCK, /*wait=*/false) == 0) {
    exclusive_ = true;
    return Status::Ok();
  }
  // A failed upgrade leaves the read lock as it was (fcntl's conversions are atomic).
  if (errno == EAGAIN || errno == EACCES)
    return Status::Busy("the index in " + home_ +
                        " is open in another handle (another process's, or another in this one); "
                        "close it there first");
  return Status::IoError(Errno("cannot lock", home_));
}

Status StoreHold::RemoveFolder() {
  if (!exclusive_) return Status::InvalidArgument("removing " + home_ + " needs the exclusive hold");
  namespace fs = std::filesystem;
  // Aside first, by one rename: from here no opener reaches the folder by its name.
  static std::atomic<uint64_t> drops{0};
  const fs::path aside = fs::path(home_).string() + ".dropped-" + std::to_string(getpid()) + "-" +
                         std::to_string(drops.fetch_add(1, std::memory_order_relaxed));
  std::error_code error;
  fs::rename(home_, aside, error);
  if (error) return Status::IoError("Drop: renaming " + home_ + ": " + error.message());
  fs::remove_all(aside, error);
  Release();  // after the removal: waiting openers then find the lock file unlinked
  if (error) return Status::IoError("Drop: removing " + aside.string() + ": " + error.message());
  return Status::Ok();
}

void StoreHold::Release() {
  if (fd_ >= 0) close(fd_);  // closing the description releases its lock
  fd_ = -1;
  exclusive_ = false;
}

}  // namespace dmindex::designs
