// What the benchmark's records look like in the index: their keys and values as bytes.
//
// The workload generators (op_stream.h) think in integer keys: a record number names a key
// (key_space.h), and a value is a stamp (who wrote it) with a fingerprint of its key. A
// RecordCodec turns those into the index's byte strings and checks what comes back:
//  * u64 format: the key is U64Key(key), the value the 8-byte integer - today's fast path,
//    byte for byte what the fixed-size designs store;
//  * bytes format, binary keys: the key's 8 big-endian bytes followed by bytes derived from
//    it, `key_bytes` long in all (uniformly spread bytes, unique, the key order kept);
//  * bytes format, YCSB keys: "user" + the record's number (hashed or ordered, YCSB's
//    insertorder) zero-padded to `key_bytes` (YCSB's zeropadding), as YCSB's CoreWorkload
//    builds them;
//  * bytes-format values: the stamp and a fingerprint of the key's bytes (8 bytes), then bytes
//    derived from them, as long as the value-size distribution draws for this write (YCSB's
//    fieldcount x fieldlength with its fieldlengthdistribution).
// So a value that belongs to another key, or is torn between two writes, or is cut short, is
// caught by Check whatever its size.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "bench/key_space.h"
#include "bench/zipfian.h"
#include "dmindex/status.h"
#include "dmindex/types.h"

namespace dmindex::bench {

enum class KeyStyle : uint8_t { kBinary, kYcsb };
// YCSB's fieldlengthdistribution.
enum class FieldLengths : uint8_t { kConstant, kUniform, kZipfian };
Result<FieldLengths> ParseFieldLengths(std::string_view name);
const char* FieldLengthsName(FieldLengths d);

struct RecordShape {
  KeyFormat format = KeyFormat::kU64;
  KeyStyle style = KeyStyle::kBinary;
  // Bytes format. Binary keys: exactly this long (8 .. kMaxKeyBytes). YCSB keys: the number
  // zero-padded to key_bytes - 4 digits (0: YCSB's own zeropadding only).
  uint32_t key_bytes = 0;
  // Bytes-format values: `fields` fields of `field_bytes` each (constant), or each field's
  // length drawn from [1, field_bytes] (uniform, zipfian) - YCSB's record. A value is at
  // least 8 bytes (its stamp and fingerprint).
  uint32_t fields = 1;
  uint32_t field_bytes = 8;
  FieldLengths field_lengths = FieldLengths::kConstant;

  // Limits of the values this shape makes.
  uint32_t MinValueBytes() const;
  uint32_t MaxValueBytes() const;
  // The longest key it makes (for the index's max_key_bytes).
  uint32_t MaxKeyBytes() const;
  // Bytes of an average record, key and value (cache sizes in percent of the data).
  double MeanRecordBytes() const;
  // "u64", or "bytes: 32-byte ycsb keys, 100-byte values", for reports.
  std::string ToString() const;
  Status Validate() const;
};

class RecordCodec {
 public:
  // `order` and `zero_padding`: the workload's (YCSB's insertorder, zeropadding).
  // `trace_keys`: keys are a replayed trace's (integer N + 1 for "user<N>", key_space.h),
  // not generated ones.
  RecordCodec(const RecordShape& shape, InsertOrder order, uint32_t zero_padding, bool trace_keys = false);

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

 private:
  uint32_t ValueBytesFor(uint64_t head) const;

  RecordShape shape_;
  InsertOrder order_;
  uint32_t zero_padding_;
  bool trace_keys_;
  std::optional<ZipfianGenerator> field_ranks_;  // zipfian field lengths: YCSB's (1 .. field_bytes)
};

}  // namespace dmindex::bench
