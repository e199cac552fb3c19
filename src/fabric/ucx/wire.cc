#include "fabric/ucx/wire.h"

namespace dmindex::fabric::ucx::wire {

Status StatusFromWire(uint32_t code, std::string m) {
  using C = Status::Code;
  switch (static_cast<C>(code)) {
    case C::kOk: return Status::Ok();
    case C::kNotFound: return Status::NotFound(std::move(m));
    case C::kInvalidArgument: return Status::InvalidArgument(std::move(m));
    case C::kUnavailable: return Status::Unavailable(std::move(m));
    case C::kOutOfSpace: return Status::OutOfSpace(std::move(m));
    case C::kCorruption: return Status::Corruption(std::move(m));
    case C::kRetry: return Status::Retry(std::move(m));
    case C::kIoError: return Status::IoError(std::move(m));
    case C::kNotSupported: return Status::NotSupported(std::move(m));
    case C::kAborted: return Status::Aborted(std::move(m));
    case C::kNotOwner: return Status::NotOwner(std::move(m));
  }
  return Status::Corruption("status code " + std::to_string(code) + " from memory server: " + m);
}

}  // namespace dmindex::fabric::ucx::wire
