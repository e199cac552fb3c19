#include "dmindex/status.h"

#include "common/retry_status.h"

namespace dmindex {

std::string Status::ToString() const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kNotFound: name = "NotFound"; break;
    case Code::kInvalidArgument: name = "InvalidArgument"; break;
    case Code::kUnavailable: name = "Unavailable"; break;
    case Code::kOutOfSpace: name = "OutOfSpace"; break;
    case Code::kCorruption: name = "Corruption"; break;
    case Code::kIoError: name = "IoError"; break;
    case Code::kNotSupported: name = "NotSupported"; break;
    case Code::kAborted: name = "Aborted"; break;
    case Code::kNotOwner: name = "NotOwner"; break;
    case Code::kBusy: name = "Busy"; break;
    default: name = code_ == kRetryCode ? "Retry (internal)" : "unknown status code"; break;
  }
  return message_.empty() ? std::string(name) : std::string(name) + ": " + message_;
}

}  // namespace dmindex
