// A handle's hold on a store index's folder (rocksdb, lmdb under IndexOptions::directory), so
// that Drop never removes a folder another handle - of this process or another - has open.
//
// Each open handle holds a shared lock on <home>/dmindex-holders.lock; Drop upgrades its own to
// an exclusive one without waiting, which fails while any other shared lock exists (Busy), and
// keeps it until the folder is gone. The locks are open-file-description locks (fcntl
// F_OFD_SETLK): one per handle even within one process, released by the kernel when the
// holder's process dies (a dead holder never blocks a drop), and upgraded atomically - two
// handles that try to drop at once both see the other's lock and both say Busy, never one
// dropping the other's folder after the other let its lock go (flock's conversion is not
// atomic, and POSIX record locks are per process: neither would do).
//
// The dropper renames the folder aside before it removes it, so no opener can open or create a
// file in it once the drop has begun. An opener that opened the lock file before the rename
// waits for the drop (its shared lock waits for the exclusive one), then finds the file
// unlinked: the index it looked up is gone, and it looks again.
#pragma once

#include <string>
#include <utility>

#include "dmindex/status.h"

namespace dmindex::designs {

// The lock file's name in an index's folder (not a sign of an index: FindStoreHome ignores it).
inline constexpr const char* kStoreHoldFile = "dmindex-holders.lock";

class StoreHold {
 public:
  StoreHold() = default;
  StoreHold(StoreHold&& other) noexcept;
  StoreHold& operator=(StoreHold&& other) noexcept;
  StoreHold(const StoreHold&) = delete;
  StoreHold& operator=(const StoreHold&) = delete;
  ~StoreHold() { Release(); }

  // A shared hold on the folder `home` (which must exist), waiting while a drop holds it.
  // Aborted if the folder was dropped meanwhile (the lock file is unlinked: look the index up
  // again); IoError for a folder that cannot hold the lock file.
  static Result<StoreHold> Take(const std::string& home);

  // Makes this hold the only one (for Drop), or Busy while another handle holds the folder;
  // this hold stays shared then.
  Status MakeExclusive();

  // After MakeExclusive: renames the folder aside and removes it, then releases the hold.
  Status RemoveFolder();

  bool held() const { return fd_ >= 0; }
  bool exclusive() const { return exclusive_; }
  void Release();

 private:
  explicit StoreHold(int fd, std::string home) : fd_(fd), home_(std::move(home)) {}

  int fd_ = -1;
  bool exclusive_ = false;
  std::string home_;
};

}  // namespace dmindex::designs
