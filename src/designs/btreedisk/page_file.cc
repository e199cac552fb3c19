#include "designs/btreedisk/page_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace dmindex::designs::btreedisk {
namespace {

Status Errno(const std::string& what) { return Status::IoError(what + ": " + std::strerror(errno)); }

// pread/pwrite until done (they may transfer less than asked).
Status ReadFully(int fd, void* buf, size_t len, uint64_t off, const char* what) {
  auto* p = static_cast<char*>(buf);
  while (len > 0) {
    const ssize_t n = pread(fd, p, len, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(std::string("btree-disk: reading ") + what);
    if (n == 0) {  // beyond the end: a page never written reads as zeros
      std::memset(p, 0, len);
      return Status::Ok();
    }
    p += n;
    len -= static_cast<size_t>(n);
    off += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

Status WriteFully(int fd, const void* buf, size_t len, uint64_t off, const char* what) {
  const auto* p = static_cast<const char*>(buf);
  while (len > 0) {
    const ssize_t n = pwrite(fd, p, len, static_cast<off_t>(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(std::string("btree-disk: writing ") + what);
    p += n;
    len -= static_cast<size_t>(n);
    off += static_cast<uint64_t>(n);
  }
  return Status::Ok();
}

// O_DIRECT transfers need memory aligned to the device's blocks.
constexpr size_t kDirectAlign = 4096;
struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
std::unique_ptr<std::byte, AlignedFree> AlignedPage(uint32_t bytes) {
  return std::unique_ptr<std::byte, AlignedFree>(static_cast<std::byte*>(std::aligned_alloc(kDirectAlign, bytes)));
}

}  // namespace

Result<std::unique_ptr<PageFile>> PageFile::Open(const std::string& parent_dir, bool keep, uint32_t page_bytes,
                                                 bool direct) {
  if (direct && page_bytes % kDirectAlign != 0)
    return Status::InvalidArgument("btree-disk: direct I/O needs pages of a multiple of 4 KiB, not " +
                                   std::to_string(page_bytes) + " bytes");
  auto dir = tiering::StoreDir::Create(parent_dir, "dmindex-btree", keep);
  if (!dir.ok()) return dir.status();
  const int pages = ::open((dir->path() + "/pages").c_str(),
                           O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | (direct ? O_DIRECT : 0), 0644);
  if (pages < 0) return Errno("btree-disk: creating " + dir->path() + "/pages");
  const int log = ::open((dir->path() + "/values").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    ::close(pages);
    return Errno("btree-disk: creating " + dir->path() + "/values");
  }
  return std::unique_ptr<PageFile>(new PageFile(std::move(dir).value(), pages, log, page_bytes, direct));
}

PageFile::~PageFile() {
  Status ignored = Close();
  (void)ignored;
}

Status PageFile::Close() {
  if (pages_fd_ >= 0) ::close(pages_fd_);
  if (log_fd_ >= 0) ::close(log_fd_);
  pages_fd_ = log_fd_ = -1;
  return dir_.Remove();
}

Status PageFile::Load(GlobalAddress addr, std::byte* page) {
  page_reads_.fetch_add(1, std::memory_order_relaxed);
  if (!direct_) return ReadFully(pages_fd_, page, page_bytes_, OffsetOf(addr), "a page");
  auto buf = AlignedPage(page_bytes_);
  if (buf == nullptr) return Status::IoError("btree-disk: no memory for an aligned page");
  DMX_RETURN_IF_ERROR(ReadFully(pages_fd_, buf.get(), page_bytes_, OffsetOf(addr), "a page"));
  std::memcpy(page, buf.get(), page_bytes_);
  return Status::Ok();
}

Status PageFile::WriteBack(GlobalAddress addr, const std::byte* page) {
  page_writes_.fetch_add(1, std::memory_order_relaxed);
  if (!direct_) return WriteFully(pages_fd_, page, page_bytes_, OffsetOf(addr), "a page");
  auto buf = AlignedPage(page_bytes_);
  if (buf == nullptr) return Status::IoError("btree-disk: no memory for an aligned page");
  std::memcpy(buf.get(), page, page_bytes_);
  return WriteFully(pages_fd_, buf.get(), page_bytes_, OffsetOf(addr), "a page");
}

Status PageFile::AppendValue(std::string_view value, uint64_t* offset) {
  *offset = log_end_.fetch_add(value.size(), std::memory_order_relaxed);
  return WriteFully(log_fd_, value.data(), value.size(), *offset, "the value log");
}

Status PageFile::ReadValue(uint64_t offset, uint64_t length, std::string* out) {
  log_reads_.fetch_add(1, std::memory_order_relaxed);
  out->resize(length);
  return ReadFully(log_fd_, out->data(), length, offset, "the value log");
}

uint64_t PageFile::file_bytes() const {
  return next_page_.load(std::memory_order_relaxed) * page_bytes_ + log_end_.load(std::memory_order_relaxed);
}

PageFileCounters PageFile::Counters() const {
  PageFileCounters c;
  c.page_reads = page_reads_.load(std::memory_order_relaxed);
  c.page_writes = page_writes_.load(std::memory_order_relaxed);
  c.log_reads = log_reads_.load(std::memory_order_relaxed);
  c.log_bytes = log_end_.load(std::memory_order_relaxed);
  return c;
}

}  // namespace dmindex::designs::btreedisk
