#include "common/key_text.h"

namespace dmindex {
namespace {

// Longest text before a key is cut: both ends stay, the middle goes.
constexpr size_t kMaxShownBytes = 64;

void Append(std::string* out, Slice bytes) {
  static const char* const kHex = "0123456789abcdef";
  for (const char ch : bytes) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out->push_back(static_cast<char>(c));
    } else if (c == '\\') {
      out->append("\\\\");
    } else {
      out->append("\\x");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    }
  }
}

}  // namespace

std::string BytesText(Slice bytes) {
  std::string out = "\"";
  if (bytes.size() <= kMaxShownBytes) {
    Append(&out, bytes);
  } else {
    Append(&out, bytes.substr(0, kMaxShownBytes / 2));
    out += "...";
    Append(&out, bytes.substr(bytes.size() - kMaxShownBytes / 4));
  }
  out += "\"";
  if (bytes.size() > kMaxShownBytes) out += " (" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

std::string EscapedText(Slice bytes) {
  std::string out;
  Append(&out, bytes);
  return out;
}

std::string KeyText(Slice key, KeyFormat format) {
  if (format == KeyFormat::kU64 && key.size() == kU64KeyBytes) return std::to_string(U64Key::Decode(key));
  return BytesText(key);
}

}  // namespace dmindex
