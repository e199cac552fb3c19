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

// The bytes AppendDerived appends, one at a time.
class DerivedBytes {
 public:
  explicit DerivedBytes(uint64_t seed) : x_(Mix64(seed)) {}
  char Next() {
    if (at_ == 8) {
      x_ = Mix64(x_ + 1);
      at_ = 0;
    }
    return static_cast<char>(x_ >> (8 * at_++));
  }

 private:
  uint64_t x_;
  int at_ = 0;
};

// The bytes a YCSB record's field values hold, in field order: the fingerprint first (so a
// record of fewer than 8 value bytes still carries some of it), the stamp, derived bytes.
class RecordBytes {
 public:
  explicit RecordBytes(uint64_t head) : head_(head << 32 | head >> 32), derived_(head) {}
  char Next() { return at_ < 8 ? static_cast<char>(head_ >> (56 - 8 * at_++)) : derived_.Next(); }

 private:
  uint64_t head_;  // fingerprint in the high half
  DerivedBytes derived_;
  int at_ = 0;
};

void AppendBigEndian32(uint32_t v, std::string* out) {
  for (int shift = 24; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

uint32_t BigEndian32(Slice bytes) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(bytes[i]);
  return v;
}

// Printable stand-ins of value bytes in --trace-out lines (YCSB's own are random printables).
char Printable(char c) {
  static constexpr char kAlphabet[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  return kAlphabet[static_cast<unsigned char>(c) % 62];
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

uint64_t RecordShape::FieldNameBytes() const {
  uint64_t bytes = 0;
  for (uint32_t f = 0; f < fields; ++f) bytes += 8 + field_prefix.size() + std::to_string(f).size();
  return bytes;
}

uint32_t RecordShape::MinValueBytes() const {
  if (format == KeyFormat::kU64) return 8;
  const uint32_t least = field_lengths == FieldLengths::kConstant ? field_bytes : min_field_bytes;
  if (ycsb_fields) return static_cast<uint32_t>(FieldNameBytes() + uint64_t{fields} * least);
  return std::max(8u, fields * least);
}

uint32_t RecordShape::MaxValueBytes() const {
  if (format == KeyFormat::kU64) return 8;
  if (ycsb_fields) return static_cast<uint32_t>(FieldNameBytes() + uint64_t{fields} * field_bytes);
  return std::max(8u, fields * field_bytes);
}

uint32_t RecordShape::MaxKeyBytes() const {
  if (format == KeyFormat::kU64) return kU64KeyBytes;
  if (style != KeyStyle::kYcsb) return std::max(1u, key_bytes);
  // "user", then at most 19 digits and a sign (a hashed record Java's Math.abs leaves
  // negative), or the padding.
  return std::max({4u + 20u, key_bytes, 4u + zero_padding});
}

double RecordShape::MeanRecordBytes() const {
  if (format == KeyFormat::kU64) return 16;
  const double key = style == KeyStyle::kBinary ? key_bytes : MaxKeyBytes();
  const double field = field_lengths == FieldLengths::kConstant ? field_bytes : (min_field_bytes + field_bytes) / 2.0;
  if (ycsb_fields) return key + static_cast<double>(FieldNameBytes()) + fields * field;
  return key + std::max(8.0, fields * field);
}

std::string RecordShape::ToString() const {
  if (format == KeyFormat::kU64) return "u64";
  std::string s = "bytes: ";
  if (style == KeyStyle::kBinary) s += std::to_string(key_bytes) + "-byte binary keys";
  else if (style == KeyStyle::kTrace) s += "the trace's keys verbatim";
  else {
    const uint32_t width = std::max(zero_padding, key_bytes > 4 ? key_bytes - 4 : 0);
    s += std::string("ycsb keys user<") + (order == InsertOrder::kHashed ? "FNV-64 of the record" : "record") + ">";
    if (width > 1) s += " zero-padded to " + std::to_string(width) + " digits";
  }
  const std::string lengths = field_lengths == FieldLengths::kConstant
                                  ? std::to_string(field_bytes)
                                  : std::string(FieldLengthsName(field_lengths)) + " " +
                                        std::to_string(min_field_bytes) + ".." + std::to_string(field_bytes);
  if (ycsb_fields)
    s += ", YCSB records of " + std::to_string(fields) + " x " + lengths + "-byte fields (" +
         (MinValueBytes() == MaxValueBytes() ? std::to_string(MaxValueBytes())
                                             : std::to_string(MinValueBytes()) + ".." + std::to_string(MaxValueBytes())) +
         " bytes serialized as the YCSB binding does)";
  else
    s += ", values of " + std::to_string(fields) + " x " + lengths + " bytes";
  return s;
}

Status RecordShape::Validate() const {
  if (format == KeyFormat::kU64) return Status::Ok();
  if (style == KeyStyle::kBinary && (key_bytes < 8 || key_bytes > kMaxKeyBytes))
    return Status::InvalidArgument("--key-bytes " + std::to_string(key_bytes) + ": binary keys have 8 .. " +
                                   std::to_string(kMaxKeyBytes) + " bytes (the first 8 make them unique)");
  if (MaxKeyBytes() > kMaxKeyBytes)
    return Status::InvalidArgument("keys of up to " + std::to_string(MaxKeyBytes()) + " bytes (--key-bytes " +
                                   std::to_string(key_bytes) + ", zeropadding " + std::to_string(zero_padding) +
                                   "): an index takes keys of at most " + std::to_string(kMaxKeyBytes));
  if (fields == 0 || field_bytes == 0)
    return Status::InvalidArgument("a value needs at least one field of at least one byte");
  if (field_lengths != FieldLengths::kConstant && (min_field_bytes < 1 || min_field_bytes > field_bytes))
    return Status::InvalidArgument("minfieldlength " + std::to_string(min_field_bytes) + ": field lengths are drawn "
                                   "from [minfieldlength, fieldlength], which needs 1 <= minfieldlength <= " +
                                   std::to_string(field_bytes));
  if (uint64_t{fields} * field_bytes + (ycsb_fields ? FieldNameBytes() : 0) > (1u << 30))
    return Status::InvalidArgument("values of " + std::to_string(uint64_t{fields} * field_bytes) +
                                   " bytes: at most 1 GiB");
  return Status::Ok();
}

RecordCodec::RecordCodec(const RecordShape& shape, std::shared_ptr<const std::vector<std::string>> trace_names)
    : shape_(shape), trace_names_(std::move(trace_names)) {
  if (shape.field_lengths == FieldLengths::kZipfian)
    field_ranks_.emplace(shape.field_bytes - shape.min_field_bytes + 1, 0.99);
  if (shape.ycsb_fields)
    for (uint32_t f = 0; f < shape.fields; ++f) field_names_.push_back(shape.field_prefix + std::to_string(f));
}

void RecordCodec::EncodeKey(Key key, std::string* out) const {
  out->clear();
  if (shape_.format == KeyFormat::kU64) {
    out->append(Slice(U64Key(key)));
    return;
  }
  switch (shape_.style) {
    case KeyStyle::kBinary:
      out->append(Slice(U64Key(key)));
      AppendDerived(key, shape_.key_bytes, out);
      return;
    case KeyStyle::kTrace:
      out->append((*trace_names_)[key - 1]);
      return;
    case KeyStyle::kYcsb: {
      const uint32_t width = std::max(shape_.zero_padding, shape_.key_bytes > 4 ? shape_.key_bytes - 4 : 0);
      out->append(YcsbKeyName(key - 1, shape_.order, width));
      return;
    }
  }
}

uint32_t RecordCodec::FieldBytes(Rng& rng) const {
  const RecordShape& s = shape_;
  if (s.field_lengths == FieldLengths::kConstant) return s.field_bytes;
  const uint64_t span = s.field_bytes - s.min_field_bytes + 1;
  return s.min_field_bytes +
         static_cast<uint32_t>(s.field_lengths == FieldLengths::kUniform ? rng.Below(span) : field_ranks_->Next(rng));
}

uint32_t RecordCodec::ValueBytesFor(uint64_t head) const {
  const RecordShape& s = shape_;
  if (s.field_lengths == FieldLengths::kConstant) return std::max(8u, s.fields * s.field_bytes);
  // Drawn from the value's own head, so the length of a value read back can be checked.
  uint64_t total = 0;
  Rng rng(head);
  for (uint32_t f = 0; f < s.fields; ++f) total += FieldBytes(rng);
  return static_cast<uint32_t>(std::max<uint64_t>(8, total));
}

void RecordCodec::EncodeRecord(uint64_t head, std::string* out) const {
  Rng rng(head);  // the fields' lengths, drawn from the head as ValueBytesFor draws them
  RecordBytes bytes(head);
  for (const std::string& name : field_names_) {
    AppendBigEndian32(static_cast<uint32_t>(name.size()), out);
    out->append(name);
    const uint32_t n = FieldBytes(rng);
    AppendBigEndian32(n, out);
    for (uint32_t i = 0; i < n; ++i) out->push_back(bytes.Next());
  }
}

void RecordCodec::EncodeValue(Slice key, Value value, std::string* out) const {
  out->clear();
  if (shape_.format == KeyFormat::kU64) {
    out->append(Slice(U64Key(value)));
    return;
  }
  // The stamp of the generated value, the fingerprint of the key's bytes.
  const uint64_t head = (value & ~uint64_t{0xffffffff}) | Fingerprint(key);
  if (shape_.ycsb_fields) return EncodeRecord(head, out);
  out->append(Slice(U64Key(head)));
  AppendDerived(head, ValueBytesFor(head), out);
}

Status RecordCodec::CheckRecord(Slice key, Slice value) const {
  const auto bad = [&](const std::string& why) {
    return Status::Corruption("key " + KeyText(key) + " holds a value of " + std::to_string(value.size()) +
                              " bytes that is not a YCSB record of " + std::to_string(shape_.fields) +
                              " fields: " + why);
  };
  // First the layout: names, lengths within the shape's, nothing after the last field; and
  // the first 8 bytes of the fields' values (fingerprint and stamp).
  const RecordShape& s = shape_;
  size_t at = 0;
  uint64_t payload = 0, head = 0;
  for (const std::string& name : field_names_) {
    if (value.size() - at < 8 + name.size() || BigEndian32(value.substr(at)) != name.size() ||
        value.substr(at + 4, name.size()) != Slice(name))
      return bad("field " + name + " is not at byte " + std::to_string(at));
    at += 4 + name.size();
    const uint32_t n = BigEndian32(value.substr(at));
    at += 4;
    if ((s.field_lengths == FieldLengths::kConstant ? n != s.field_bytes : n < s.min_field_bytes || n > s.field_bytes) ||
        n > value.size() - at)
      return bad("field " + name + " has " + std::to_string(n) + " bytes");
    for (uint32_t i = 0; i < n && payload < 8; ++i, ++payload)
      head = head << 8 | static_cast<unsigned char>(value[at + i]);
    at += n;
  }
  if (at != value.size()) return bad(std::to_string(value.size() - at) + " bytes after the last field");
  const uint32_t fingerprint = Fingerprint(key);
  if (payload < 8) {  // only as much of the fingerprint as fits
    const uint64_t expected = payload <= 4 ? uint64_t{fingerprint} >> (32 - 8 * payload) : fingerprint;
    if ((payload <= 4 ? head : head >> (8 * (payload - 4))) != expected)
      return Status::Corruption("key " + KeyText(key) + " holds a value written to another key");
    return Status::Ok();
  }
  if (static_cast<uint32_t>(head >> 32) != fingerprint)
    return Status::Corruption("key " + KeyText(key) + " holds a value written to another key");
  // Then every value byte, and the lengths drawn from the head.
  const uint64_t written = head << 32 | head >> 32;
  Rng rng(written);
  RecordBytes bytes(written);
  at = 0;
  for (const std::string& name : field_names_) {
    at += 4 + name.size();
    const uint32_t n = BigEndian32(value.substr(at));
    at += 4;
    if (n != FieldBytes(rng))
      return bad("field " + name + " has " + std::to_string(n) + " bytes, its write had another length");
    for (uint32_t i = 0; i < n; ++i)
      if (value[at + i] != bytes.Next())
        return Status::Corruption("key " + KeyText(key) + " holds a record whose field " + name +
                                  " is not its write's (torn or mixed with another value)");
    at += n;
  }
  return Status::Ok();
}

Status RecordCodec::Check(Slice key, Slice value) const {
  if (shape_.format == KeyFormat::kU64) {
    if (key.size() == 8 && value.size() == 8 && ValueMatchesKey(U64Key::Decode(key), U64Key::Decode(value)))
      return Status::Ok();
    return Status::Corruption("key " + KeyText(key) + " holds a value of " + std::to_string(value.size()) +
                              " bytes " + BytesText(value) + ", never written to it");
  }
  if (shape_.ycsb_fields) return CheckRecord(key, value);
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

std::string RecordCodec::TraceFields(Key op_key, Value value) const {
  if (shape_.format == KeyFormat::kU64) return "field0=" + std::to_string(value) + " ";
  std::string key, bytes, out;
  EncodeKey(op_key, &key);
  EncodeValue(key, value, &bytes);
  if (!shape_.ycsb_fields) {
    std::transform(bytes.begin(), bytes.end(), bytes.begin(), Printable);
    return "field0=" + bytes + " ";
  }
  size_t at = 0;
  for (const std::string& name : field_names_) {
    at += 4 + name.size();
    const uint32_t n = BigEndian32(Slice(bytes).substr(at));
    at += 4;
    out += name + "=";
    for (uint32_t i = 0; i < n; ++i) out.push_back(Printable(bytes[at + i]));
    out += " ";
    at += n;
  }
  return out;
}

std::string RecordCodec::KeyText(Slice key) const { return dmindex::KeyText(key, shape_.format); }

}  // namespace dmindex::bench
