// YCSB property files: files written the way YCSB ships its workloads run unchanged;
// malformed ones fail with a message naming file and line.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/property_file.h"

namespace dmindex::bench {
namespace {

// Laid out as YCSB's workloads/workloada: license header, description comments with
// trailing blanks, client properties we do not use, the core-workload properties.
constexpr const char* kWorkloadA =
    "# Copyright (c) 2010 Yahoo! Inc. All rights reserved.                                 \n"
    "#                                                                                     \n"
    "# Licensed under the Apache License, Version 2.0 (the \"License\"); you               \n"
    "\n"
    "\n"
    "# Yahoo! Cloud System Benchmark\n"
    "# Workload A: Update heavy workload\n"
    "#   Application example: Session store recording recent actions\n"
    "#                        \n"
    "#   Read/update ratio: 50/50\n"
    "#   Request distribution: zipfian\n"
    "\n"
    "recordcount=1000\n"
    "operationcount=1000\n"
    "workload=site.ycsb.workloads.CoreWorkload\n"
    "\n"
    "readallfields=true\n"
    "\n"
    "readproportion=0.5\n"
    "updateproportion=0.5\n"
    "scanproportion=0\n"
    "insertproportion=0\n"
    "\n"
    "requestdistribution=zipfian\n"
    "\n";

constexpr const char* kWorkloadE =
    "# Yahoo! Cloud System Benchmark\n"
    "# Workload E: Short ranges\n"
    "recordcount=1000\n"
    "operationcount=1000\n"
    "workload=site.ycsb.workloads.CoreWorkload\n"
    "\n"
    "readallfields=true\n"
    "\n"
    "readproportion=0\n"
    "updateproportion=0\n"
    "scanproportion=0.95\n"
    "insertproportion=0.05\n"
    "\n"
    "requestdistribution=zipfian\n"
    "\n"
    "maxscanlength=100\n"
    "\n"
    "scanlengthdistribution=uniform\n";

Result<WorkloadSpec> FromText(const std::string& text) {
  auto props = ParseProperties(text, "test");
  if (!props.ok()) return props.status();
  WorkloadSpec spec = YcsbDefaults("test");
  DMX_RETURN_IF_ERROR(ApplyProperties(*props, &spec));
  DMX_RETURN_IF_ERROR(spec.Validate());
  return spec;
}

class TempFile {
 public:
  TempFile(const std::string& name, const std::string& text)
      : path_(std::filesystem::temp_directory_path() /
              ("dmx_bench_" + std::to_string(::getpid()) + "_" + name)) {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

TEST(BenchPropertyFile, WorkloadAAsYcsbShipsIt) {
  TempFile file("workloada", kWorkloadA);
  auto spec = LoadWorkloadFile(file.path());
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_EQ(spec->name, std::filesystem::path(file.path()).filename().string());
  EXPECT_EQ(spec->record_count, 1000u);
  EXPECT_EQ(spec->operation_count, 1000u);
  EXPECT_DOUBLE_EQ(spec->Share(OpKind::kRead), 0.5);
  EXPECT_DOUBLE_EQ(spec->Share(OpKind::kUpdate), 0.5);
  EXPECT_DOUBLE_EQ(spec->Share(OpKind::kScan), 0.0);
  EXPECT_EQ(spec->request, Distribution::kZipfian);
  EXPECT_DOUBLE_EQ(spec->zipfian_theta, 0.99);
}

TEST(BenchPropertyFile, WorkloadEScansAndInserts) {
  auto spec = FromText(kWorkloadE);
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_DOUBLE_EQ(spec->Share(OpKind::kScan), 0.95);
  EXPECT_DOUBLE_EQ(spec->Share(OpKind::kInsert), 0.05);
  EXPECT_EQ(spec->min_scan_length, 1u);
  EXPECT_EQ(spec->max_scan_length, 100u);
  EXPECT_EQ(spec->scan_length, ScanLengthDistribution::kUniform);
}

TEST(BenchPropertyFile, WorkloadsDAndFAndYcsbDefaults) {
  auto d = FromText("readproportion=0.95\nupdateproportion=0\nscanproportion=0\n"
                    "insertproportion=0.05\nrequestdistribution=latest\n");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->request, Distribution::kLatest);
  EXPECT_DOUBLE_EQ(d->Share(OpKind::kInsert), 0.05);
  auto f = FromText("readproportion=0.5\nupdateproportion=0\nscanproportion=0\n"
                    "insertproportion=0\nreadmodifywriteproportion=0.5\n");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_DOUBLE_EQ(f->Share(OpKind::kReadModifyWrite), 0.5);
  // Absent properties take YCSB's CoreWorkload defaults.
  auto bare = FromText("recordcount=10\n");
  ASSERT_TRUE(bare.ok());
  EXPECT_DOUBLE_EQ(bare->Share(OpKind::kRead), 0.95);
  EXPECT_DOUBLE_EQ(bare->Share(OpKind::kUpdate), 0.05);
  EXPECT_EQ(bare->request, Distribution::kUniform);
  EXPECT_EQ(bare->max_scan_length, 1000u);
}

// java.util.Properties syntax, which YCSB reads its files with.
TEST(BenchPropertyFile, JavaPropertiesSyntax) {
  auto spec = FromText("  readproportion = 1 \r\nupdateproportion: 0\n! a comment\n"
                       "requestdistribution=\\\n  zipfian\n"
                       "insertproportion   0\n"          // key, blanks, value
                       "scanproportion:0\n"
                       "table\\=x=t\\u0041b\n"           // an escaped '=' in the key: unknown key
                       "insertorder=Ordered\n"           // any case
                       "readallfields\n");               // a key alone: empty value
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  EXPECT_DOUBLE_EQ(spec->Share(OpKind::kRead), 1.0);
  EXPECT_EQ(spec->request, Distribution::kZipfian);
  EXPECT_EQ(spec->insert_order, InsertOrder::kOrdered);
  // The odd key and readallfields come back as warnings, not silence.
  std::string all;
  for (const std::string& w : spec->warnings) all += w + "\n";
  EXPECT_NE(all.find("unknown property 'table=x'"), std::string::npos) << all;
  EXPECT_NE(all.find("readallfields is not honoured"), std::string::npos) << all;
  auto table = FromText("table = my\\u0020table\n");
  ASSERT_FALSE(table.ok());  // one word only: trace lines name it
  auto escaped = FromText("table=t\\u0041b\n");
  ASSERT_TRUE(escaped.ok()) << escaped.status().ToString();
  EXPECT_EQ(escaped->table, "tAb");
  // Two backslashes at the end are an escaped backslash, not a continuation.
  auto props = ParseProperties("a=x\\\\\nb=y\n", "t");
  ASSERT_TRUE(props.ok());
  ASSERT_EQ(props->size(), 2u);
  EXPECT_EQ((*props)[0].value, "x\\");
}

TEST(BenchPropertyFile, YcsbQuirksAndPropertiesYcsbDoesNotHave) {
  // YCSB takes every insertorder but "hashed" as ordered, and says nothing; we say it.
  auto odd = FromText("insertorder=Hashed\n");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->insert_order, InsertOrder::kOrdered);
  ASSERT_EQ(odd->warnings.size(), 1u);
  EXPECT_NE(odd->warnings[0].find("every value but 'hashed'"), std::string::npos);
  // zipfianconstant is not YCSB 0.17.0's: refused with a pointer to --theta.
  auto zc = FromText("zipfianconstant=0.7\n");
  ASSERT_FALSE(zc.ok());
  EXPECT_NE(zc.status().message().find("--theta"), std::string::npos) << zc.status().ToString();
  EXPECT_FALSE(FromText("workload=site.ycsb.workloads.TimeSeriesWorkload\n").ok());
  auto sizes = FromText("insertstart=100\ninsertcount=50\nrecordcount=1000\nzeropadding=7\nthreadcount=3\n");
  ASSERT_TRUE(sizes.ok()) << sizes.status().ToString();
  EXPECT_EQ(sizes->insert_start, 100u);
  EXPECT_EQ(sizes->insert_count, 50u);
  EXPECT_EQ(sizes->zero_padding, 7u);
  EXPECT_EQ(sizes->thread_count, 3u);
  EXPECT_FALSE(FromText("insertstart=900\ninsertcount=200\nrecordcount=1000\n").ok());
  // Any zeropadding a key can hold (YCSB takes any int; an index's keys are at most 1024 bytes).
  auto wide = FromText("zeropadding=40\n");
  ASSERT_TRUE(wide.ok()) << wide.status().ToString();
  EXPECT_EQ(wide->zero_padding, 40u);
  EXPECT_FALSE(FromText("zeropadding=1021\n").ok());
  // A file without threadcount runs YCSB's one thread.
  EXPECT_EQ(FromText("readproportion=1\n")->thread_count, 1u);
  auto target = FromText("target=1000\nreadallfields=false\n");
  ASSERT_TRUE(target.ok());
  EXPECT_EQ(target->warnings.size(), 2u);
  // YCSB's record shape is taken (values of a bytes-format run).
  auto fields = FromText("fieldcount=4\nfieldlength=25\nfieldlengthdistribution=uniform\n");
  ASSERT_TRUE(fields.ok()) << fields.status().ToString();
  EXPECT_TRUE(fields->warnings.empty());
  EXPECT_EQ(fields->field_count, 4u);
  EXPECT_EQ(fields->field_length, 25u);
  EXPECT_EQ(fields->field_length_distribution, "uniform");
  auto names = FromText("fieldnameprefix=col\nminfieldlength=5\n");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_TRUE(names->warnings.empty());
  EXPECT_EQ(names->field_name_prefix, "col");
  EXPECT_EQ(names->min_field_length, 5u);
  EXPECT_FALSE(FromText("fieldlengthdistribution=histogram\n").ok());
}

TEST(BenchPropertyFile, HotspotAndExponentialTakeTheirYcsbProperties) {
  auto hot = FromText("readproportion=1\nrequestdistribution=hotspot\n"
                      "hotspotdatafraction=0.05\nhotspotopnfraction=0.95\n");
  ASSERT_TRUE(hot.ok()) << hot.status().ToString();
  EXPECT_EQ(hot->request, Distribution::kHotspot);
  EXPECT_DOUBLE_EQ(hot->hotspot_data_fraction, 0.05);
  EXPECT_DOUBLE_EQ(hot->hotspot_op_fraction, 0.95);
  auto exp = FromText("readproportion=1\nrequestdistribution=exponential\n"
                      "exponential.percentile=90\nexponential.frac=0.5\n");
  ASSERT_TRUE(exp.ok()) << exp.status().ToString();
  EXPECT_EQ(exp->request, Distribution::kExponential);
  EXPECT_DOUBLE_EQ(exp->exponential_percentile, 90);
  EXPECT_DOUBLE_EQ(exp->exponential_frac, 0.5);
}

TEST(BenchPropertyFile, MalformedLineIsAnErrorNamingTheLine) {
  // Java's syntax makes nearly any line a property; a broken \u escape is not.
  auto spec = FromText("readproportion=0.5\nreadproportion=\\u12\n");
  ASSERT_FALSE(spec.ok());
  EXPECT_TRUE(spec.status().IsInvalidArgument());
  EXPECT_NE(spec.status().message().find("test:2"), std::string::npos) << spec.status().ToString();
  EXPECT_NE(spec.status().message().find("malformed"), std::string::npos);
  EXPECT_FALSE(FromText("=0.5\n").ok());
  // A line of prose is a property with a key nobody knows: a warning naming its line.
  auto prose = FromText("this line is not a property\n");
  ASSERT_TRUE(prose.ok());
  ASSERT_EQ(prose->warnings.size(), 1u);
  EXPECT_NE(prose->warnings[0].find("test:1: unknown property 'this'"), std::string::npos) << prose->warnings[0];
}

TEST(BenchPropertyFile, BinaryBytesOfABadFileAreEscapedInMessages) {
  for (const std::string& text : {std::string("read\x01\xff=1\n"), std::string("recordcount=\x1b[31m\xfe\n"),
                                 std::string("readproportion=\\u12\x07\n")}) {
    auto spec = FromText(text);
    std::string message = spec.ok() ? (spec->warnings.empty() ? "" : spec->warnings[0]) : spec.status().message();
    ASSERT_FALSE(message.empty()) << "a bad line is an error or a warning";
    for (const char c : message)
      EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f)
          << "raw byte " << static_cast<int>(static_cast<unsigned char>(c)) << " in: " << message;
    EXPECT_NE(message.find("\\x"), std::string::npos) << "bytes shown as \\xHH: " << message;
  }
}

TEST(BenchPropertyFile, BadValuesAreErrors) {
  EXPECT_FALSE(FromText("readproportion=half\n").ok());
  EXPECT_FALSE(FromText("recordcount=-5\n").ok());
  EXPECT_FALSE(FromText("recordcount=12abc\n").ok());
  EXPECT_FALSE(FromText("maxscanlength=99999999999\n").ok());
  EXPECT_FALSE(FromText("requestdistribution=pareto\n").ok());
  EXPECT_FALSE(FromText("requestdistribution=hotspot\nhotspotdatafraction=1.5\n").ok());
  EXPECT_FALSE(FromText("requestdistribution=exponential\nexponential.percentile=100\n").ok());
  EXPECT_FALSE(FromText("readproportion=0\nupdateproportion=0\n").ok());  // nothing to do
  EXPECT_FALSE(FromText("readproportion=-1\n").ok());
  EXPECT_FALSE(FromText("zipfianconstant=1.5\n").ok());
  EXPECT_FALSE(FromText("minscanlength=10\nmaxscanlength=5\n").ok());
  EXPECT_FALSE(FromText("scanlengthdistribution=normal\n").ok());
}

TEST(BenchPropertyFile, MissingFileIsAnError) {
  auto spec = LoadWorkloadFile("/nonexistent/workloada");
  ASSERT_FALSE(spec.ok());
  EXPECT_NE(spec.status().message().find("/nonexistent/workloada"), std::string::npos);
}

TEST(BenchPropertyFile, CommandLineOverrides) {
  WorkloadSpec spec = YcsbDefaults("x");
  ASSERT_TRUE(ApplyPropertyOverride("requestdistribution=latest", &spec).ok());
  EXPECT_EQ(spec.request, Distribution::kLatest);
  EXPECT_FALSE(ApplyPropertyOverride("requestdistribution", &spec).ok());
  EXPECT_FALSE(ApplyPropertyOverride("readproportion=x", &spec).ok());
  // A mistyped key on the command line is an error, not ignored.
  const Status typo = ApplyPropertyOverride("readproportoin=0.5", &spec);
  EXPECT_TRUE(typo.IsInvalidArgument());
  EXPECT_NE(typo.message().find("unknown property 'readproportoin'"), std::string::npos) << typo.ToString();
}

}  // namespace
}  // namespace dmindex::bench
