#include "tiering/store_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>
#include <vector>

namespace dmindex::tiering {

Result<StoreDir> StoreDir::Create(std::string_view parent, std::string_view prefix, bool keep) {
  std::error_code ec;
  std::filesystem::path base =
      parent.empty() ? std::filesystem::temp_directory_path(ec) : std::filesystem::path(parent);
  if (ec) return Status::IoError("no temporary directory for a store: " + ec.message());
  std::filesystem::create_directories(base, ec);
  if (ec) return Status::IoError("cannot create store directory parent '" + base.string() + "': " + ec.message());
  std::string pattern = (base / (std::string(prefix) + "-XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) == nullptr)
    return Status::IoError("cannot create a store directory in '" + base.string() + "': " + std::strerror(errno));
  StoreDir d;
  d.path_ = buf.data();
  d.keep_ = keep;
  return d;
}

Result<StoreDir> StoreDir::Use(std::string_view path) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path), ec);
  if (ec) return Status::IoError("cannot create store directory '" + std::string(path) + "': " + ec.message());
  StoreDir d;
  d.path_ = std::string(path);
  d.keep_ = true;
  return d;
}

StoreDir& StoreDir::operator=(StoreDir&& other) noexcept {
  if (this != &other) {
    Status ignored = Remove();
    (void)ignored;
    path_ = std::move(other.path_);
    keep_ = other.keep_;
    other.path_.clear();
  }
  return *this;
}

StoreDir::~StoreDir() {
  Status ignored = Remove();
  (void)ignored;
}

Status StoreDir::Remove() {
  if (path_.empty()) return Status::Ok();
  const std::string path = std::move(path_);
  path_.clear();
  if (keep_) return Status::Ok();
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
  if (ec) return Status::IoError("cannot remove store directory '" + path + "': " + ec.message());
  return Status::Ok();
}

}  // namespace dmindex::tiering
