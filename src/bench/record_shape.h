// What the benchmark's records look like in the index: their keys and values as bytes.
//
// The workload generators (op_stream.h) think in integer keys: a record number names a key
// (key_space.h), and a value is a stamp (who wrote it) with a fingerprint of its key. A
// RecordCodec turns those into the index's byte strings and checks what comes back:
//  * u64 format: the key is U64Key(key), the value the 8-byte integer - the papers' fast path,
//    byte for byte what the fixed-size designs store;
//  * bytes format, binary keys: the key's 8 big-endian bytes followed by bytes derived from
//    it, `key_bytes` long in all (uniformly spread bytes, unique, the key order kept);
//  * bytes format, YCSB keys: integer key r + 1 is record r, named as YCSB's
//    CoreWorkload.buildKeyName names it (YcsbKeyName: "user" + FNV-64 of r, or r itself when
//    ordered, zero-padded), so the index holds the real client's key strings in string order;
//  * bytes format, trace keys: integer key i + 1 is the i-th distinct key of a replayed trace,
//    whose bytes are kept verbatim (trace.h);
//  * bytes-format values, raw: the stamp and a fingerprint of the key's bytes (8 bytes), then
//    bytes derived from them, as long as the value-size distribution draws for this write;
//  * bytes-format values, YCSB records: `fields` fields named field0, field1, ... serialized as
//    the YCSB binding stores a record (bindings/ycsb Records.java: per field a 4-byte
//    big-endian name length, the name, a 4-byte big-endian value length, the value), their
//    lengths YCSB's fieldlength / fieldlengthdistribution; the values' bytes, in field order,
//    are the key's fingerprint, the stamp, then bytes derived from them.
// So a value that belongs to another key, or is torn between two writes, or is cut short, is
// caught by Check whatever its size (a record whose fields hold fewer than 8 bytes in all
// carries only as much of the fingerprint as fits, and no stamp).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/key_space.h"
#include "bench/random.h"
#include "bench/zipfian.h"
#include "dmindex/status.h"
#include "dmindex/types.h"

namespace dmindex::bench {

enum class KeyStyle : uint8_t { kBinary, kYcsb, kTrace };
// YCSB's fieldlengthdistribution.
enum class FieldLengths : uint8_t { kConstant, kUniform, kZipfian };
Result<FieldLengths> ParseFieldLengths(std::string_view name);
const char* FieldLengthsName(FieldLengths d);

struct RecordShape {
  KeyFormat format = KeyFormat::kU64;
  KeyStyle style = KeyStyle::kBinary;
  // Bytes format. Binary keys: exactly this long (8 .. kMaxKeyBytes). YCSB keys: the number
  // zero-padded to key_bytes - 4 digits (or zero_padding, the wider). Trace keys: the longest.
  uint32_t key_bytes = 0;
  // YCSB's insertorder and zeropadding: how YCSB keys (and --trace-out lines) name records.
  InsertOrder order = InsertOrder::kHashed;
  uint32_t zero_padding = 1;
  // Bytes-format values: `fields` fields of `field_bytes` each (constant), or each field's
  // length drawn from [min_field_bytes, field_bytes] (uniform, zipfian). Raw values are the
  // fields' bytes, at least 8 (the stamp and fingerprint); YCSB records serialize the fields
  // with their names, field_prefix + 0, 1, ... (YCSB's fieldnameprefix).
  bool ycsb_fields = false;
  std::string field_prefix = "field";
  uint32_t fields = 1;
  uint32_t min_field_bytes = 1;
  uint32_t field_bytes = 8;
  FieldLengths field_lengths = FieldLengths::kConstant;

  // Limits of the values this shape makes.
  uint32_t MinValueBytes() const;
  uint32_t MaxValueBytes() const;
  // The longest key it makes (for the index's max_key_bytes).
  uint32_t MaxKeyBytes() const;
  // Bytes of an average record, key and value (cache sizes in percent of the data).
  double MeanRecordBytes() const;
  // "u64", or "bytes: ycsb keys user<FNV-64 of the record>, YCSB records of 10 x 100-byte
  // fields (1140 bytes serialized)", for reports.
  std::string ToString() const;
  Status Validate() const;

 private:
  uint64_t FieldNameBytes() const;  // a YCSB record's bytes besides its fields' values
};

class RecordCodec {
 public:
  // `trace_names`: the distinct keys of a replayed trace (bytes format, KeyStyle::kTrace).
  explicit RecordCodec(const RecordShape& shape,
                       std::shared_ptr<const std::vector<std::string>> trace_names = nullptr);

  const RecordShape& shape() const { return shape_; }
  bool integers() const { return shape_.format == KeyFormat::kU64; }

  // The key of integer key `key`, into *out.
  void EncodeKey(Key key, std::string* out) const;
  std::string EncodeKey(Key key) const {
    std::string out;
    EncodeKey(key, &out);
    return out;
  }
  // The bytes of generated value `value` (stamp and key fingerprint) written to `key`.
  void EncodeValue(Slice key, Value value, std::string* out) const;
  // OK if `value` is a value EncodeValue makes for `key`; Corruption saying what is wrong.
  Status Check(Slice key, Slice value) const;
  // A key as reports print it.
  std::string KeyText(Slice key) const;
  // What YCSB's BasicDB prints for a write of `value` to the key of `op_key`: its fields as
  // "name=bytes " (printable stand-ins of the value's bytes, each field its own length).
  std::string TraceFields(Key op_key, Value value) const;

 private:
  uint32_t FieldBytes(Rng& rng) const;  // one field's length (YCSB's fieldlength generator)
  uint32_t ValueBytesFor(uint64_t head) const;
  void EncodeRecord(uint64_t head, std::string* out) const;
  Status CheckRecord(Slice key, Slice value) const;

  RecordShape shape_;
  std::shared_ptr<const std::vector<std::string>> trace_names_;
  std::vector<std::string> field_names_;          // YCSB records: field0, field1, ...
  std::optional<ZipfianGenerator> field_ranks_;  // zipfian field lengths: YCSB's
};

}  // namespace dmindex::bench
