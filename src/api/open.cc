// Index::Open: the design registry behind the public header.
#include "designs/registry.h"
#include "dmindex/index.h"

namespace dmindex {

Result<std::unique_ptr<Index>> Index::Open(const IndexOptions& options, std::shared_ptr<Cluster> cluster) {
  if (cluster == nullptr) {
    auto embedded = Cluster::Open();
    if (!embedded.ok()) return embedded.status();
    cluster = std::move(embedded).value();
  }
  auto index = designs::MakeIndex(options.design, cluster->fabric(), options);
  if (!index.ok()) return index.status();
  (*index)->cluster_ = std::move(cluster);
  return index;
}

std::vector<std::string> Index::Designs() { return designs::DesignNames(); }

}  // namespace dmindex
