// The benchmark's records as bytes (bench/record_shape.h): the keys YCSB builds, binary keys
// that keep their integers' order, values whose every byte is checked against their key.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

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

RecordShape Ycsb(InsertOrder order, uint32_t zero_padding, uint32_t key_bytes = 0) {
  RecordShape s = Bytes(KeyStyle::kYcsb, key_bytes);
  s.order = order;
  s.zero_padding = zero_padding;
  return s;
}

// YCSB's records: fields named field0.. serialized as the binding's Records.java does.
RecordShape YcsbRecords(uint32_t fields, uint32_t field_bytes, FieldLengths lengths = FieldLengths::kConstant) {
  RecordShape s = Bytes(KeyStyle::kYcsb, 0, fields, field_bytes, lengths);
  s.ycsb_fields = true;
  return s;
}

TEST(BenchRecordShape, YcsbKeysAreYcsbsNames) {
  // Record r is integer key r + 1, named as CoreWorkload.buildKeyName names it.
  for (InsertOrder order : {InsertOrder::kHashed, InsertOrder::kOrdered}) {
    RecordCodec codec(Ycsb(order, 1));
    for (uint64_t record : {0ull, 7ull, 12345ull, 999999999ull})
      EXPECT_EQ(codec.EncodeKey(record + 1), YcsbKeyName(record, order, 1)) << record;
  }
  // The first key YCSB 0.17.0 loads (Utils.hash(0), FNV-64 of eight zero octets): the real
  // client's names (tests/ycsb_oracle_test.cc compares them by the thousand).
  EXPECT_EQ(RecordCodec(Ycsb(InsertOrder::kHashed, 1)).EncodeKey(1), "user6284781860667377211");
  // zeropadding and --key-bytes pad the number, as YCSB's zeropadding does, to any width a
  // key can hold - hashed names too (YCSB pads them alike).
  EXPECT_EQ(RecordCodec(Ycsb(InsertOrder::kOrdered, 1, 24)).EncodeKey(43), "user00000000000000000042");
  EXPECT_EQ(RecordCodec(Ycsb(InsertOrder::kOrdered, 6)).EncodeKey(43), "user000042");
  EXPECT_EQ(RecordCodec(Ycsb(InsertOrder::kOrdered, 30)).EncodeKey(43), "user" + std::string(28, '0') + "42");
  EXPECT_EQ(RecordCodec(Ycsb(InsertOrder::kHashed, 25)).EncodeKey(1), "user000000" + std::string("6284781860667377211"));
  EXPECT_EQ(Ycsb(InsertOrder::kOrdered, 30).MaxKeyBytes(), 34u);
  EXPECT_TRUE(Ycsb(InsertOrder::kOrdered, 1020).Validate().ok());
  EXPECT_TRUE(Ycsb(InsertOrder::kOrdered, 1021).Validate().IsInvalidArgument());
  // A replayed trace's keys come back verbatim, zeros and all, whatever they are.
  RecordShape trace = Bytes(KeyStyle::kTrace, 10);
  RecordCodec verbatim(trace, std::make_shared<const std::vector<std::string>>(
                                  std::vector<std::string>{"user000017", "user17", "k\x01y"}));
  EXPECT_EQ(verbatim.EncodeKey(1), "user000017");
  EXPECT_EQ(verbatim.EncodeKey(2), "user17");
  EXPECT_EQ(verbatim.EncodeKey(3), "k\x01y");
}

TEST(BenchRecordShape, YcsbRecordsAreTheBindingsBytes) {
  RecordCodec codec(YcsbRecords(10, 100));
  const std::string key = codec.EncodeKey(5);
  std::string value;
  codec.EncodeValue(key, MakeValue(5, 3), &value);
  // 10 x (4 + 6 + 4 + 100) bytes: a 4-byte big-endian name length, "field<i>", a 4-byte
  // big-endian value length, the value (bindings/ycsb Records.java).
  ASSERT_EQ(value.size(), 1140u);
  EXPECT_EQ(codec.shape().MinValueBytes(), 1140u);
  EXPECT_EQ(codec.shape().MaxValueBytes(), 1140u);
  for (int f = 0; f < 10; ++f) {
    const std::string field = value.substr(f * 114, 14);
    EXPECT_EQ(field, std::string("\0\0\0\6field", 9) + std::to_string(f) + std::string("\0\0\0\x64", 4)) << f;
  }
  EXPECT_TRUE(codec.Check(key, value).ok());
  // Every way of not being this write's record is caught.
  EXPECT_TRUE(codec.Check(codec.EncodeKey(6), value).IsCorruption());  // another key's
  for (size_t at : {size_t{7}, size_t{13}, size_t{14}, size_t{20}, size_t{500}, value.size() - 1}) {
    std::string torn = value;
    torn[at] ^= 1;
    EXPECT_TRUE(codec.Check(key, torn).IsCorruption()) << "byte " << at;
  }
  EXPECT_TRUE(codec.Check(key, value.substr(0, 1139)).IsCorruption());
  EXPECT_TRUE(codec.Check(key, value + "x").IsCorruption());
  // A record of fewer value bytes than a fingerprint still names its key.
  RecordCodec tiny(YcsbRecords(1, 1));
  std::string one;
  tiny.EncodeValue(tiny.EncodeKey(1), MakeValue(1, 9), &one);
  EXPECT_EQ(one.size(), 4u + 6 + 4 + 1);
  EXPECT_TRUE(tiny.Check(tiny.EncodeKey(1), one).ok());
  int caught = 0;  // the one byte is the fingerprint's first: another key's is another byte but 1 in 256
  for (Key k = 2; k < 20; ++k) caught += tiny.Check(tiny.EncodeKey(k), one).IsCorruption();
  EXPECT_GE(caught, 17);
  // YCSB's fieldnameprefix and minfieldlength: names and lengths as the file says.
  RecordShape varying = YcsbRecords(4, 50, FieldLengths::kUniform);
  varying.field_prefix = "f";
  varying.min_field_bytes = 20;
  RecordCodec uniform(varying);
  std::set<size_t> sizes;
  for (uint32_t stamp = 1; stamp < 200; ++stamp) {
    std::string v;
    uniform.EncodeValue(uniform.EncodeKey(3), MakeValue(3, stamp), &v);
    sizes.insert(v.size());
    EXPECT_EQ(v.substr(0, 6), std::string("\0\0\0\2f0", 6));
    EXPECT_TRUE(uniform.Check(uniform.EncodeKey(3), v).ok());
  }
  EXPECT_GT(sizes.size(), 20u);
  EXPECT_GE(*sizes.begin(), varying.MinValueBytes());
  EXPECT_EQ(varying.MinValueBytes(), 4u * (4 + 2 + 4 + 20));
  EXPECT_LE(*sizes.rbegin(), varying.MaxValueBytes());
}

TEST(BenchRecordShape, TraceOutFieldsHaveTheRecordsLengths) {
  RecordCodec codec(YcsbRecords(3, 5));
  const std::string fields = codec.TraceFields(2, MakeValue(2, 1));
  ASSERT_EQ(fields.size(), 3u * (7 + 5 + 1)) << fields;
  EXPECT_EQ(fields.substr(0, 7), "field0=");
  EXPECT_EQ(fields.substr(13, 7), "field1=");
  EXPECT_EQ(fields.find_first_of(" ", 7), 12u);
  EXPECT_EQ(RecordCodec(RecordShape{}).TraceFields(2, 17), "field0=17 ");
}

TEST(BenchRecordShape, BinaryKeysHaveTheirLengthAndTheirIntegersOrder) {
  RecordCodec codec(Bytes(KeyStyle::kBinary, 32));
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
                                   Bytes(KeyStyle::kBinary, 16, 3, 500, FieldLengths::kZipfian),
                                   YcsbRecords(10, 100), YcsbRecords(3, 500, FieldLengths::kZipfian)}) {
    RecordCodec codec(shape);
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
  RecordCodec uniform(Bytes(KeyStyle::kBinary, 16, 4, 50, FieldLengths::kUniform));
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
  RecordCodec codec(RecordShape{});
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
  RecordShape bad_min = YcsbRecords(2, 10, FieldLengths::kUniform);
  bad_min.min_field_bytes = 11;
  EXPECT_TRUE(bad_min.Validate().IsInvalidArgument());
}

}  // namespace
}  // namespace dmindex::bench
