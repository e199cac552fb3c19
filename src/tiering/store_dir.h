// StoreDir: the directory a disk store keeps its files in. Each store gets a fresh directory
// of its own, created inside a parent directory (an option; the system's temporary directory
// by default), so two indexes never share files and a store never reopens stale data (the
// index above it is volatile: docs/INDEXY.md). Remove() deletes it with everything in it,
// unless the store was asked to keep it (for inspection after a benchmark).
#pragma once

#include <string>
#include <string_view>

#include "dmindex/status.h"

namespace dmindex::tiering {

class StoreDir {
 public:
  // A new directory named "<prefix>-XXXXXX" inside `parent` (created if missing; empty: the
  // system temporary directory). IoError naming the path if it cannot be created.
  static Result<StoreDir> Create(std::string_view parent, std::string_view prefix, bool keep);
  // The directory `path` itself (created if missing), kept: a store that outlives its process.
  static Result<StoreDir> Use(std::string_view path);

  StoreDir() = default;
  StoreDir(StoreDir&& other) noexcept { *this = std::move(other); }
  StoreDir& operator=(StoreDir&& other) noexcept;
  StoreDir(const StoreDir&) = delete;
  StoreDir& operator=(const StoreDir&) = delete;
  // Removes the directory if Remove() was not called (errors ignored: call Remove).
  ~StoreDir();

  const std::string& path() const { return path_; }
  bool keep() const { return keep_; }
  // Deletes the directory and its contents (unless keep). A second call does nothing.
  Status Remove();

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace dmindex::tiering
