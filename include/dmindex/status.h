// Status and Result<T>: how every dmindex call reports success or a clear error.
// Modelled on RocksDB's Status: a code plus a human-readable message, no exceptions
// on the data path.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace dmindex {

class Status {
 public:
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound,         // key (or named object) does not exist
    kInvalidArgument,  // caller error: bad flag, oversized key, malformed request
    kUnavailable,      // a memory server does not answer (down, unreachable, connection lost)
    kOutOfSpace,       // the memory pool (or a fixed-size table) is exhausted
    kCorruption,       // data failed validation and retrying cannot fix it
    kRetry,            // transient conflict; the caller should retry the operation
    kIoError,          // transport or OS error
    kNotSupported,
    kAborted,          // stopped on request (e.g. Ctrl-C)
    kNotOwner,         // the key's partition is served by a compute node of another process
    kBusy,             // gave up retrying (a retry budget ran out); the message says what kept failing
  };

  Status() = default;
  static Status Ok() { return {}; }
  static Status NotFound(std::string m = {}) { return {Code::kNotFound, std::move(m)}; }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status OutOfSpace(std::string m) { return {Code::kOutOfSpace, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status Retry(std::string m = {}) { return {Code::kRetry, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status NotSupported(std::string m) { return {Code::kNotSupported, std::move(m)}; }
  static Status Aborted(std::string m) { return {Code::kAborted, std::move(m)}; }
  static Status NotOwner(std::string m) { return {Code::kNotOwner, std::move(m)}; }
  static Status Busy(std::string m) { return {Code::kBusy, std::move(m)}; }
  static Status FromCode(Code c, std::string m) { return {c, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsUnavailable() const { return code_ == Code::kUnavailable; }
  bool IsOutOfSpace() const { return code_ == Code::kOutOfSpace; }
  bool IsRetry() const { return code_ == Code::kRetry; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsNotOwner() const { return code_ == Code::kNotOwner; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}             // NOLINT: implicit by design
  Result(Status s) : v_(std::move(s)) {}                // NOLINT: must not be OK
  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  T& operator*() { return std::get<T>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace dmindex

// Propagates a non-OK Status to the caller.
#define DMX_RETURN_IF_ERROR(expr)          \
  do {                                     \
    ::dmindex::Status _dmx_s = (expr);     \
    if (!_dmx_s.ok()) return _dmx_s;       \
  } while (0)
