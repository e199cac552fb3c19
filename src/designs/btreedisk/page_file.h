// Where btree-disk's B+-tree lives on disk: a page file (page i at offset i x page_bytes,
// written when the buffer manager evicts or flushes a dirty page, read on a miss) and a value
// log for values too long for a leaf (appended, read by reference; space of overwritten
// values is not reclaimed - the index is volatile and the experiments run once). Both in a
// fresh directory of their own (tiering/store_dir.h), removed on Close unless kept.
//
// It is the cache's PageLoader and PageWriter (cache/page_io.h): a node's address is
// GlobalAddress(0, (page + 1) x page_bytes), so no page has the null address.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "cache/page_io.h"
#include "tiering/store_dir.h"

namespace dmindex::designs::btreedisk {

struct PageFileCounters {
  uint64_t page_reads = 0;
  uint64_t page_writes = 0;
  uint64_t log_reads = 0;
  uint64_t log_bytes = 0;  // appended
};

class PageFile final : public cache::PageLoader, public cache::PageWriter {
 public:
  // `direct`: pages bypass the OS page cache (O_DIRECT), so the buffer pool is the only cache
  // of the tree, as LeanStore's; needs pages of a multiple of 4 KiB.
  static Result<std::unique_ptr<PageFile>> Open(const std::string& parent_dir, bool keep, uint32_t page_bytes,
                                                bool direct = false);
  ~PageFile() override;

  GlobalAddress NewPage() {
    return GlobalAddress(0, (next_page_.fetch_add(1, std::memory_order_relaxed) + 1) * page_bytes_);
  }
  Status Load(GlobalAddress addr, std::byte* page) override;
  Status WriteBack(GlobalAddress addr, const std::byte* page) override;

  // Appends a value to the log; *offset is where it went.
  Status AppendValue(std::string_view value, uint64_t* offset);
  Status ReadValue(uint64_t offset, uint64_t length, std::string* out);

  uint64_t file_bytes() const;
  PageFileCounters Counters() const;
  Status Close();

 private:
  PageFile(tiering::StoreDir dir, int pages_fd, int log_fd, uint32_t page_bytes, bool direct)
      : dir_(std::move(dir)), pages_fd_(pages_fd), log_fd_(log_fd), page_bytes_(page_bytes), direct_(direct) {}
  uint64_t OffsetOf(GlobalAddress addr) const { return addr.offset() - page_bytes_; }

  tiering::StoreDir dir_;
  int pages_fd_;
  int log_fd_;
  const uint32_t page_bytes_;
  const bool direct_;  // O_DIRECT: transfers go through an aligned buffer
  std::atomic<uint64_t> next_page_{0};
  std::atomic<uint64_t> log_end_{0};
  std::atomic<uint64_t> page_reads_{0}, page_writes_{0}, log_reads_{0};
};

}  // namespace dmindex::designs::btreedisk
