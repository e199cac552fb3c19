// Index::Open: the design registry behind the public header.
#include "designs/registry.h"
#include "api/cluster_access.h"
#include "api/handles.h"
#include "dmindex/index.h"

namespace dmindex {

Result<std::unique_ptr<Index>> Index::Open(const IndexOptions& options, std::shared_ptr<Cluster> cluster) {
  if (cluster == nullptr) {
    auto embedded = Cluster::Open();
    if (!embedded.ok()) return embedded.status();
    cluster = std::move(embedded).value();
  }
  auto design = designs::MakeIndex(options.design, FabricOf(*cluster), options);
  if (!design.ok()) return design.status();
  std::unique_ptr<Index> index = std::make_unique<internal::IndexHandle>(
      std::move(design).value(), !designs::SharedAcrossProcesses(options.design).ok());
  index->cluster_ = std::move(cluster);
  return index;
}

std::vector<std::string> Index::Designs() { return designs::DesignNames(); }

}  // namespace dmindex
