#include "designs/kvstore/store_home.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "common/runtime.h"
#include "designs/kvstore/store_hold.h"

namespace dmindex::designs {
namespace {

constexpr const char* kDescription = "dmindex-index.json";
constexpr const char* kInstance = "instance";  // not part of what a reopen must match

// What a reopen must match: the design and the key rules the stored data was written under.
nlohmann::json Describe(const IndexOptions& o, std::string_view design) {
  const bool u64 = o.key_format == KeyFormat::kU64;
  return {{"design", std::string(design)},
          {"key_format", u64 ? "u64" : "bytes"},
          {"max_key_bytes", u64 ? kU64KeyBytes : o.max_key_bytes},
          {"max_value_bytes", o.max_value_bytes}};
}

std::string Text(const nlohmann::json& d) {
  return d.value("design", "?") + " with " + d.value("key_format", "?") + " keys of up to " +
         std::to_string(d.value("max_key_bytes", 0u)) + " bytes and values of up to " +
         std::to_string(d.value("max_value_bytes", 0u)) + " bytes";
}

Status CheckName(std::string_view name) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      name.find('\0') != std::string_view::npos)
    return Status::InvalidArgument("index name '" + std::string(name) +
                                   "' is not a folder name (the index lives in <directory>/<name>)");
  return Status::Ok();
}

// Whether `folder` holds anything but the holders' lock file (which a handle creating the
// index makes first, StoreHold).
// The stored description, or a discarded value if unreadable.
nlohmann::json ReadDescription(const std::filesystem::path& description) {
  std::ifstream in(description);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

bool HoldsFiles(const std::filesystem::path& folder) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
    if (entry.path().filename() != kStoreHoldFile) return true;
  return false;
}

}  // namespace

Result<StoreHome> FindStoreHome(const IndexOptions& options, std::string_view design) {
  DMX_RETURN_IF_ERROR(CheckName(options.name));
  namespace fs = std::filesystem;
  StoreHome home;
  home.path = (fs::path(options.directory) / options.name).string();
  const fs::path description = fs::path(home.path) / kDescription;
  std::error_code ec;
  if (fs::exists(description, ec)) {
    nlohmann::json stored = ReadDescription(description);
    if (stored.is_discarded() || !stored.is_object())
      return Status::Corruption("cannot read " + description.string());
    home.instance = stored.value(kInstance, "");
    stored.erase(kInstance);
    const nlohmann::json wanted = Describe(options, design);
    if (stored != wanted)
      return Status::InvalidArgument("index '" + options.name + "' in " + options.directory + " was created as " +
                                     Text(stored) + "; opened as " + Text(wanted));
    home.exists = true;
    return home;
  }
  if (fs::exists(home.path, ec) && HoldsFiles(home.path))
    return Status::InvalidArgument(home.path + " exists but holds no dmindex index (no " + kDescription +
                                   "); choose another name or directory");
  if (!options.create_if_missing)
    return Status::NotFound("no index '" + options.name + "' in directory " + options.directory +
                            " (create_if_missing is off)");
  return home;
}

Status DescribeStoreHome(StoreHome* home, const IndexOptions& options, std::string_view design) {
  const std::filesystem::path description = std::filesystem::path(home->path) / kDescription;
  nlohmann::json d = Describe(options, design);
  home->instance = std::to_string(runtime::Entropy());
  d[kInstance] = home->instance;
  std::ofstream out(description, std::ios::trunc);
  out << d.dump(2) << "\n";
  out.close();
  if (!out) return Status::IoError("cannot write " + description.string());
  return Status::Ok();
}

Result<std::string> StoreInstance(const std::string& path) {
  const std::filesystem::path description = std::filesystem::path(path) / kDescription;
  std::error_code ec;
  if (!std::filesystem::exists(description, ec)) return Status::NotFound("no index in " + path);
  const nlohmann::json stored = ReadDescription(description);
  if (stored.is_discarded() || !stored.is_object()) return Status::Corruption("cannot read " + description.string());
  return stored.value(kInstance, "");
}

}  // namespace dmindex::designs
