// Where a store index (rocksdb, lmdb) lives when IndexOptions::directory names a folder:
// <directory>/<name>, holding the store's files and a small file saying what the index was
// created as, so that a second Open finds it by name and refuses another design or key format.
#pragma once

#include <string>
#include <string_view>

#include "dmindex/options.h"
#include "dmindex/status.h"

namespace dmindex::designs {

struct StoreHome {
  std::string path;      // <directory>/<name>
  bool exists = false;   // it holds an index created before (checked against the options)
  // Which index of that name it is: random, made when the index is created (so an index
  // dropped and made anew under the name is another), "" for one made before it was kept.
  std::string instance;
};

// The home of index options.name under options.directory (which must be set). InvalidArgument
// for a name that is not one folder name, for a folder that holds something else than an
// index, and for an index created as another design or with other key limits (naming the
// stored ones); NotFound for an absent index without create_if_missing; Corruption for an
// unreadable description.
Result<StoreHome> FindStoreHome(const IndexOptions& options, std::string_view design);

// Records what the index at `home` is (after its store was created there), with a new
// instance (set in *home).
Status DescribeStoreHome(StoreHome* home, const IndexOptions& options, std::string_view design);

// The instance recorded in the folder `path`; NotFound if it holds no index.
Result<std::string> StoreInstance(const std::string& path);

}  // namespace dmindex::designs
