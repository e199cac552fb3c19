// Status and Result<T>: how every dmindex call reports success or a clear error.
// Modelled on RocksDB's Status: a code plus a human-readable message, no exceptions on the
// data path. Both are [[nodiscard]]: a dropped Status is a compile-time warning.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace dmindex {

class [[nodiscard]] Status {
 public:
  // The codes a public call can return. The value 6 is reserved for dmindex's internal
  // restart signal (an operation starting over after a conflict); every public entry point
  // loops on it or translates it, so no public call returns it.
  enum class Code : unsigned char {
    kOk = 0,
    kNotFound = 1,         // key (or named object) does not exist
    kInvalidArgument = 2,  // caller error: bad flag, reserved key, malformed request
    kUnavailable = 3,      // a memory server does not answer (down, unreachable, connection lost)
    kOutOfSpace = 4,       // the memory pool (or a fixed-size table) is exhausted
    kCorruption = 5,       // data failed validation and retrying cannot fix it
    kIoError = 7,          // transport or OS error
    kNotSupported = 8,     // the design (or this build) has no such feature
    kAborted = 9,          // stopped on request (e.g. Ctrl-C)
    kNotOwner = 10,        // the key's partition is served by a compute node of another process
    kBusy = 11,            // gave up retrying (a retry budget ran out); the message says what kept failing
  };

  Status() = default;
  static Status Ok() { return {}; }
  static Status NotFound(std::string m = {}) { return {Code::kNotFound, std::move(m)}; }
  static Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
  static Status Unavailable(std::string m) { return {Code::kUnavailable, std::move(m)}; }
  static Status OutOfSpace(std::string m) { return {Code::kOutOfSpace, std::move(m)}; }
  static Status Corruption(std::string m) { return {Code::kCorruption, std::move(m)}; }
  static Status IoError(std::string m) { return {Code::kIoError, std::move(m)}; }
  static Status NotSupported(std::string m) { return {Code::kNotSupported, std::move(m)}; }
  static Status Aborted(std::string m) { return {Code::kAborted, std::move(m)}; }
  static Status NotOwner(std::string m) { return {Code::kNotOwner, std::move(m)}; }
  static Status Busy(std::string m) { return {Code::kBusy, std::move(m)}; }
  static Status FromCode(Code c, std::string m) { return {c, std::move(m)}; }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsUnavailable() const { return code_ == Code::kUnavailable; }
  bool IsOutOfSpace() const { return code_ == Code::kOutOfSpace; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsIoError() const { return code_ == Code::kIoError; }
  bool IsNotSupported() const { return code_ == Code::kNotSupported; }
  bool IsAborted() const { return code_ == Code::kAborted; }
  bool IsNotOwner() const { return code_ == Code::kNotOwner; }
  bool IsBusy() const { return code_ == Code::kBusy; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "OK", or the code's name and the message: "NotFound: index 'x' ...".
  std::string ToString() const;

 private:
  Status(Code c, std::string m) : code_(c), message_(std::move(m)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  // `s` must not be OK (a Result without a value needs a reason). An OK Status is a
  // programming error; it becomes InvalidArgument saying so, so that `!ok()` always comes
  // with a non-OK status().
  Result(Status s)  // NOLINT: implicit by design
      : v_(s.ok() ? Status::InvalidArgument("Result made from an OK Status without a value "
                                            "(a bug in the code that returned it)")
                  : std::move(s)) {}

  bool ok() const { return std::holds_alternative<T>(v_); }
  // OK when there is a value.
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  // The value; only when ok() (std::bad_variant_access otherwise).
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  T& operator*() & { return std::get<T>(v_); }
  const T& operator*() const& { return std::get<T>(v_); }
  T&& operator*() && { return std::get<T>(std::move(v_)); }

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
