#include "bench/record_shape.h"

#include <algorithm>

#include "bench/random.h"
#include "common/key_text.h"

namespace dmindex::bench {
namespace {

// FNV-1a over the key's bytes, finished by Mix64: the fingerprint a bytes-format value
// carries of its key.
uint32_t Fingerprint(Slice key) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : key) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return static_cast<uint32_t>(Mix64(h) >> 32);
}

// Bytes derived from `seed`, appended to *out until it holds `size` bytes.
void AppendDerived(uint64_t seed, size_t size, std::string* out) {
  for (uint64_t x = Mix64(seed); out->size() < size; x = Mix64(x + 1))
    for (int i = 0; i < 8 && out->size() < size; ++i) out->push_back(static_cast<char>(x >> (8 * i)));
}

bool MatchesDerived(uint64_t seed, Slice bytes) {
  size_t at = 0;
  for (uint64_t x = Mix64(seed); at < bytes.size(); x = Mix64(x + 1))
    for (int i = 0; i < 8 && at < bytes.size(); ++i, ++at)
      if (bytes[at] != static_cast<char>(x >> (8 * i))) return false;
  return true;
}

// The decimal digits of an ordered key (key_space.cc: digit d at position i weighs
// (d + 1) * 11^(17 - i), so the digits come back as base-11 digits minus one).
std::string OrderedDigits(Key key) {
  uint64_t weight = 1;
  for (int i = 0; i < 17; ++i) weight *= 11;
  std::string digits;
  for (; weight > 0; weight /= 11) {
    const uint64_t d = key / weight;
    key %= weight;
    if (d == 0) break;
    digits.push_back(static_cast<char>('0' + d - 1));
  }
  return digits;
}

}  // namespace

Result<FieldLengths> ParseFieldLengths(std::string_view name) {
  if (name == "constant") return FieldLengths::kConstant;
  if (name == "uniform") return FieldLengths::kUniform;
  if (name == "zipfian") return FieldLengths::kZipfian;
  return Status::InvalidArgument("field length distribution '" + std::string(name) +
                                 "': expected constant, uniform or zipfian");
}

const char* FieldLengthsName(FieldLengths d) {
  switch (d) {
    case FieldLengths::kConstant: return "constant";
    case FieldLengths::kUniform: return "uniform";
    case FieldLengths::kZipfian: return "zipfian";
  }
  return "?";
}

uint32_t RecordShape::MinValueBytes() const {
  if (format == KeyFormat::kU64) return 8;
  return std::max(8u, field_lengths == FieldLengths::kConstant ? fields * field_bytes : fields);
}

uint32_t RecordShape::MaxValueBytes() const {
  return format == KeyFormat::kU64 ? 8 : std::max(8u, fields * field_bytes);
}

uint32_t RecordShape::MaxKeyBytes() const {
  if (format == KeyFormat::kU64) return kU64KeyBytes;
  // YCSB keys: "user" and at most 19 digits, or the padding.
  return style == KeyStyle::kBinary ? key_bytes : std::max<uint32_t>(4 + 19, key_bytes);
}

double RecordShape::MeanRecordBytes() const {
  if (format == KeyFormat::kU64) return 16;
  const double key = style == KeyStyle::kBinary ? key_bytes : std::max<double>(4 + 19, key_bytes);
  const double field = field_lengths == FieldLengths::kConstant ? field_bytes : (1.0 + field_bytes) / 2;
  return key + std::max(8.0, fields * field);
}

std::string RecordShape::ToString() const {
  if (format == KeyFormat::kU64) return "u64";
  std::string s = "bytes: ";
  if (style == KeyStyle::kBinary) s += std::to_string(key_bytes) + "-byte binary keys";
  else s += key_bytes > 0 ? std::to_string(key_bytes) + "-byte ycsb keys" : "ycsb keys";
  s += ", values of " + std::to_string(fields) + " x " + std::to_string(field_bytes) + " bytes";
  if (field_lengths != FieldLengths::kConstant) s += std::string(" (") + FieldLengthsName(field_lengths) + ")";
  return s;
}

Status RecordShape::Validate() const {
  if (format == KeyFormat::kU64) return Status::Ok();
  if (style == KeyStyle::kBinary && (key_bytes < 8 || key_bytes > kMaxKeyBytes))
    return Status::InvalidArgument("--key-bytes " + std::to_string(key_bytes) + ": binary keys have 8 .. " +
                                   std::to_string(kMaxKeyBytes) + " bytes (the first 8 make them unique)");
  if (style == KeyStyle::kYcsb && key_bytes > kMaxKeyBytes)
    return Status::InvalidArgument("--key-bytes " + std::to_string(key_bytes) + ": at most " +
                                   std::to_string(kMaxKeyBytes));
  if (fields == 0 || field_bytes == 0)
    return Status::InvalidArgument("a value needs at least one field of at least one byte");
  if (uint64_t{fields} * field_bytes > (1u << 30))
    return Status::InvalidArgument("values of " + std::to_string(uint64_t{fields} * field_bytes) +
                                   " bytes: at most 1 GiB");
  return Status::Ok();
}

RecordCodec::RecordCodec(const RecordShape& shape, InsertOrder order, uint32_t zero_padding,
                         bool trace_keys)
    : shape_(shape), order_(order), zero_padding_(zero_padding), trace_keys_(trace_keys) {
  if (shape.field_lengths == FieldLengths::kZipfian) field_ranks_.emplace(shape.field_bytes, 0.99);
}

void RecordCodec::EncodeKey(Key key, std::string* out) const {
  out->clear();
  if (shape_.format == KeyFormat::kU64) {
    out->append(Slice(U64Key(key)));
    return;
  }
  if (shape_.style == KeyStyle::kBinary) {
    out->append(Slice(U64Key(key)));
    AppendDerived(key, shape_.key_bytes, out);
    return;
  }
  // YCSB's CoreWorkload.buildKeyName: "user" + the number, zero-padded.
  const std::string digits = trace_keys_ || order_ == InsertOrder::kHashed ? std::to_string(key - 1)
                                                                          : OrderedDigits(key);
  const size_t width = std::max<size_t>(zero_padding_, shape_.key_bytes > 4 ? shape_.key_bytes - 4 : 0);
  out->append("user");
  if (digits.size() < width) out->append(width - digits.size(), '0');
  out->append(digits);
}

uint32_t RecordCodec::ValueBytesFor(uint64_t head) const {
  const RecordShape& s = shape_;
  if (s.field_lengths == FieldLengths::kConstant) return std::max(8u, s.fields * s.field_bytes);
  // Drawn from the value's own head, so the length of a value read back can be checked.
  uint64_t total = 0;
  Rng rng(head);
  for (uint32_t f = 0; f < s.fields; ++f)
    total += 1 + (s.field_lengths == FieldLengths::kUniform ? rng.Below(s.field_bytes) : field_ranks_->Next(rng));
  return static_cast<uint32_t>(std::max<uint64_t>(8, total));
}

void RecordCodec::EncodeValue(Slice key, Value value, std::string* out) const {
  out->clear();
  if (shape_.format == KeyFormat::kU64) {
    out->append(Slice(U64Key(value)));
    return;
  }
  // The stamp of the generated value, the fingerprint of the key's bytes.
  const uint64_t head = (value & ~uint64_t{0xffffffff}) | Fingerprint(key);
  out->append(Slice(U64Key(head)));
  AppendDerived(head, ValueBytesFor(head), out);
}

Status RecordCodec::Check(Slice key, Slice value) const {
  if (shape_.format == KeyFormat::kU64) {
    if (key.size() == 8 && value.size() == 8 && ValueMatchesKey(U64Key::Decode(key), U64Key::Decode(value)))
      return Status::Ok();
    return Status::Corruption("key " + KeyText(key) + " holds a value of " + std::to_string(value.size()) +
                              " bytes " + BytesText(value) + ", never written to it");
  }
  if (value.size() < 8)
    return Status::Corruption("key " + KeyText(key) + " holds a value of " + std::to_string(value.size()) +
                              " bytes; every value written has 8 or more");
  const uint64_t head = U64Key::Decode(value.substr(0, 8));
  if (static_cast<uint32_t>(head) != Fingerprint(key))
    return Status::Corruption("key " + KeyText(key) + " holds a value written to another key");
  if (value.size() != ValueBytesFor(head))
    return Status::Corruption("key " + KeyText(key) + " holds a value of " + std::to_string(value.size()) +
                              " bytes; its write had " + std::to_string(ValueBytesFor(head)));
  if (!MatchesDerived(head, value.substr(8)))
    return Status::Corruption("key " + KeyText(key) + " holds a value whose bytes after the first 8 are "
                              "not its write's (torn or mixed with another value)");
  return Status::Ok();
}

std::string RecordCodec::KeyText(Slice key) const { return dmindex::KeyText(key, shape_.format); }

}  // namespace dmindex::bench
