#include "designs/kvstore/store_home.h"

#include <filesystem>
#include <fstream>
#include <system_error>

#include <nlohmann/json.hpp>

namespace dmindex::designs {
namespace {

constexpr const char* kDescription = "dmindex-index.json";

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

}  // namespace

Result<StoreHome> FindStoreHome(const IndexOptions& options, std::string_view design) {
  DMX_RETURN_IF_ERROR(CheckName(options.name));
  namespace fs = std::filesystem;
  StoreHome home;
  home.path = (fs::path(options.directory) / options.name).string();
  const fs::path description = fs::path(home.path) / kDescription;
  std::error_code ec;
  if (fs::exists(description, ec)) {
    std::ifstream in(description);
    const nlohmann::json stored = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (stored.is_discarded() || !stored.is_object())
      return Status::Corruption("cannot read " + description.string());
    const nlohmann::json wanted = Describe(options, design);
    if (stored != wanted)
      return Status::InvalidArgument("index '" + options.name + "' in " + options.directory + " was created as " +
                                     Text(stored) + "; opened as " + Text(wanted));
    home.exists = true;
    return home;
  }
  if (fs::exists(home.path, ec) && !fs::is_empty(home.path, ec))
    return Status::InvalidArgument(home.path + " exists but holds no dmindex index (no " + kDescription +
                                   "); choose another name or directory");
  if (!options.create_if_missing)
    return Status::NotFound("no index '" + options.name + "' in directory " + options.directory +
                            " (create_if_missing is off)");
  return home;
}

Status DescribeStoreHome(const StoreHome& home, const IndexOptions& options, std::string_view design) {
  const std::filesystem::path description = std::filesystem::path(home.path) / kDescription;
  std::ofstream out(description, std::ios::trunc);
  out << Describe(options, design).dump(2) << "\n";
  out.close();
  if (!out) return Status::IoError("cannot write " + description.string());
  return Status::Ok();
}

}  // namespace dmindex::designs
