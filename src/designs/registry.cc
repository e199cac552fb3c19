#include "designs/registry.h"

#include <functional>

#include "designs/dex/dex_index.h"
#include "designs/local/local_index.h"
#include "designs/naive/naive.h"
#include "designs/sherman/sherman.h"

namespace dmindex::designs {
namespace {

using Factory = std::function<Result<std::unique_ptr<Index>>(fabric::Fabric&, const IndexOptions&)>;

struct Entry {
  const char* name;
  Factory make;
  bool shared_across_processes = true;  // see registry.h
};

// One line per design, in the order benchmarks list them.
const std::vector<Entry>& Table() {
  static const std::vector<Entry> table = {
      {"local", MakeLocalIndex, /*shared_across_processes=*/false},
      {"naive", MakeNaive},
      {"sherman", MakeSherman},
      {"dex", MakeDex},
  };
  return table;
}

}  // namespace

std::vector<std::string> DesignNames() {
  std::vector<std::string> names;
  for (const Entry& e : Table()) names.emplace_back(e.name);
  return names;
}

bool SharedAcrossProcesses(std::string_view design) {
  for (const Entry& e : Table())
    if (design == e.name) return e.shared_across_processes;
  return false;
}

Result<std::unique_ptr<Index>> MakeIndex(std::string_view design, fabric::Fabric& fabric,
                                         const IndexOptions& options) {
  for (const Entry& e : Table())
    if (design == e.name) return e.make(fabric, options);
  std::string known;
  for (const Entry& e : Table()) known += std::string(known.empty() ? "" : ", ") + e.name;
  return Status::InvalidArgument("unknown design '" + std::string(design) + "' (known: " + known + ")");
}

}  // namespace dmindex::designs
