#include "common/byte_size.h"

#include <cctype>
#include <string>

namespace dmindex {

Result<uint64_t> ParseByteSize(std::string_view text) {
  auto bad = [&](const char* why) {
    return Status::InvalidArgument("bad size '" + std::string(text) + "': " + why +
                                   " (expected e.g. 4096, 64K, 32M, 4G)");
  };
  size_t digits = 0;
  uint64_t value = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) {
    uint64_t d = static_cast<uint64_t>(text[digits] - '0');
    if (value > (UINT64_MAX - d) / 10) return bad("too large");
    value = value * 10 + d;
    ++digits;
  }
  if (digits == 0) return bad("no number");
  std::string suffix;
  for (char c : text.substr(digits)) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() >= 3 && suffix.ends_with("IB")) suffix.resize(suffix.size() - 2);
  else if (suffix.size() >= 2 && suffix.back() == 'B') suffix.pop_back();
  int shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else if (suffix == "T") shift = 40;
  else return bad("unknown suffix");
  if (shift > 0 && value > (UINT64_MAX >> shift)) return bad("too large");
  return value << shift;
}

}  // namespace dmindex
