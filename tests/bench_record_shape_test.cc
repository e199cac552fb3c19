// The benchmark's records as bytes (bench/record_shape.h): the keys YCSB builds, binary keys
// that keep their integers' order, values whose every byte is checked against their key.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "bench/record_shape.h"

namespace dmindex::bench {
namespace {

RecordShape Bytes(KeyStyle style, uint32_t key_bytes, uint32_t fields = 1, uint32_t field_bytes = 100,
                  FieldLengths lengths = FieldLengths::kConstant) {
  RecordShape s;
  s.format = KeyFormat::kBytes;
  s.style = style;
  s.key_bytes = key_bytes;
  s.fields = fields;
  s.field_bytes = field_bytes;
  s.field_lengths = lengths;
  return s;
}

TEST(BenchRecordShape, YcsbKeysAreYcsbsNames) {
  for (InsertOrder order : {InsertOrder::kHashed, InsertOrder::kOrdered}) {
    RecordCodec codec(Bytes(KeyStyle::kYcsb, 0), order, 1);
    for (uint64_t record : {0ull, 7ull, 12345ull, 999999999ull})
      EXPECT_EQ(codec.EncodeKey(KeyOfRecord(record, order)), YcsbKeyName(record, order, 1)) << record;
  }
  // zeropadding and --key-bytes pad the number, as YCSB's zeropadding does.
  RecordCodec padded(Bytes(KeyStyle::kYcsb, 24), InsertOrder::kOrdered, 1);
  EXPECT_EQ(padded.EncodeKey(KeyOfRecord(42, InsertOrder::kOrdered)), "user00000000000000000042");
  RecordCodec file_padding(Bytes(KeyStyle::kYcsb, 0), InsertOrder::kOrdered, 6);
  EXPECT_EQ(file_padding.EncodeKey(KeyOfRecord(42, InsertOrder::kOrdered, 6)), "user000042");
  // A trace's key user<N> comes back as it was.
  RecordCodec trace(Bytes(KeyStyle::kYcsb, 0), InsertOrder::kOrdered, 1, /*trace_keys=*/true);
  EXPECT_EQ(trace.EncodeKey(12346), "user12345");
}

TEST(BenchRecordShape, BinaryKeysHaveTheirLengthAndTheirIntegersOrder) {
  RecordCodec codec(Bytes(KeyStyle::kBinary, 32), InsertOrder::kHashed, 1);
  std::set<std::string> keys;
  for (uint64_t r = 0; r < 5000; ++r) {
    const std::string k = codec.EncodeKey(KeyOfRecord(r, InsertOrder::kHashed));
    EXPECT_EQ(k.size(), 32u);
    keys.insert(k);
  }
  EXPECT_EQ(keys.size(), 5000u);
  EXPECT_LT(codec.EncodeKey(5), codec.EncodeKey(6));
  EXPECT_LT(codec.EncodeKey(255), codec.EncodeKey(256));
}

TEST(BenchRecordShape, ValuesAreCheckedByteForByte) {
  for (const RecordShape& shape : {Bytes(KeyStyle::kBinary, 16, 1, 8), Bytes(KeyStyle::kYcsb, 0, 10, 100),
                                   Bytes(KeyStyle::kBinary, 16, 3, 500, FieldLengths::kZipfian)}) {
    RecordCodec codec(shape, InsertOrder::kHashed, 1);
    const std::string key = codec.EncodeKey(77), other = codec.EncodeKey(78);
    std::string value;
    codec.EncodeValue(key, MakeValue(77, 5), &value);
    EXPECT_GE(value.size(), shape.MinValueBytes());
    EXPECT_LE(value.size(), shape.MaxValueBytes());
    EXPECT_TRUE(codec.Check(key, value).ok()) << shape.ToString();
    EXPECT_TRUE(codec.Check(other, value).IsCorruption());  // another key's value
    if (value.size() > 8) {
      std::string torn = value;
      torn.back() ^= 1;  // one byte of another write
      EXPECT_TRUE(codec.Check(key, torn).IsCorruption()) << shape.ToString();
      EXPECT_TRUE(codec.Check(key, value.substr(0, value.size() - 1)).IsCorruption());  // cut short
    }
    EXPECT_TRUE(codec.Check(key, "short").IsCorruption());
  }
  // Varying lengths really vary, within their bounds.
  RecordCodec uniform(Bytes(KeyStyle::kBinary, 16, 4, 50, FieldLengths::kUniform), InsertOrder::kHashed, 1);
  std::set<size_t> sizes;
  for (uint32_t stamp = 1; stamp < 200; ++stamp) {
    std::string v;
    uniform.EncodeValue(uniform.EncodeKey(3), MakeValue(3, stamp), &v);
    sizes.insert(v.size());
    EXPECT_TRUE(uniform.Check(uniform.EncodeKey(3), v).ok());
  }
  EXPECT_GT(sizes.size(), 20u);
  EXPECT_GE(*sizes.begin(), 8u);
  EXPECT_LE(*sizes.rbegin(), 200u);
}

TEST(BenchRecordShape, U64RecordsAreTheIntegers) {
  RecordCodec codec(RecordShape{}, InsertOrder::kHashed, 1);
  EXPECT_EQ(codec.EncodeKey(42), U64Key(42).str());
  std::string v;
  codec.EncodeValue(U64Key(42), MakeValue(42, 1), &v);
  EXPECT_EQ(v, U64Key(MakeValue(42, 1)).str());
  EXPECT_TRUE(codec.Check(U64Key(42), v).ok());
  EXPECT_TRUE(codec.Check(U64Key(43), v).IsCorruption());
}

TEST(BenchRecordShape, BadShapesAreRefused) {
  EXPECT_TRUE(Bytes(KeyStyle::kBinary, 7).Validate().IsInvalidArgument());  // not unique below 8 bytes
  EXPECT_TRUE(Bytes(KeyStyle::kBinary, 2000).Validate().IsInvalidArgument());
  EXPECT_TRUE(Bytes(KeyStyle::kYcsb, 0, 0, 10).Validate().IsInvalidArgument());
  EXPECT_TRUE(Bytes(KeyStyle::kYcsb, 0, 10, 100).Validate().ok());
}

}  // namespace
}  // namespace dmindex::bench
