// Status and Result (include/dmindex/status.h): one predicate per public code, the internal
// restart signal kept apart from them, and a Result that is never "not ok" with an OK status.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/retry_status.h"
#include "dmindex/status.h"

namespace dmindex {
namespace {

struct CodeCase {
  Status status;
  const char* name;
  bool (Status::*is)() const;
};

std::vector<CodeCase> PublicCodes() {
  return {
      {Status::NotFound("m"), "NotFound", &Status::IsNotFound},
      {Status::InvalidArgument("m"), "InvalidArgument", &Status::IsInvalidArgument},
      {Status::Unavailable("m"), "Unavailable", &Status::IsUnavailable},
      {Status::OutOfSpace("m"), "OutOfSpace", &Status::IsOutOfSpace},
      {Status::Corruption("m"), "Corruption", &Status::IsCorruption},
      {Status::IoError("m"), "IoError", &Status::IsIoError},
      {Status::NotSupported("m"), "NotSupported", &Status::IsNotSupported},
      {Status::Aborted("m"), "Aborted", &Status::IsAborted},
      {Status::NotOwner("m"), "NotOwner", &Status::IsNotOwner},
      {Status::Busy("m"), "Busy", &Status::IsBusy},
  };
}

TEST(Status, EveryPublicCodeHasExactlyItsOwnPredicateAndName) {
  const std::vector<CodeCase> cases = PublicCodes();
  for (const CodeCase& c : cases) {
    EXPECT_FALSE(c.status.ok()) << c.name;
    EXPECT_EQ(c.status.ToString(), std::string(c.name) + ": m");
    EXPECT_FALSE(IsRetry(c.status)) << c.name;
    for (const CodeCase& other : cases)
      EXPECT_EQ((c.status.*other.is)(), c.name == other.name) << c.name << " vs " << other.name;
    // FromCode (used to decode statuses off the wire) gives the same status back.
    Status again = Status::FromCode(c.status.code(), "m");
    EXPECT_TRUE((again.*c.is)()) << c.name;
  }
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "OK");
  EXPECT_EQ(Status::NotFound().ToString(), "NotFound");
}

TEST(Status, TheInternalRetryIsNoPublicCode) {
  Status r = RetryStatus("stale path");
  EXPECT_TRUE(IsRetry(r));
  EXPECT_FALSE(r.ok());
  for (const CodeCase& c : PublicCodes()) {
    EXPECT_FALSE((r.*c.is)()) << c.name;
    EXPECT_NE(r.code(), c.status.code()) << c.name;
  }
  EXPECT_EQ(r.ToString(), "Retry (internal): stale path");
}

TEST(Result, AnOkStatusWithoutAValueBecomesAnError) {
  Result<int> r(Status::Ok());  // a programming error, caught
  EXPECT_FALSE(r.ok());
  EXPECT_FALSE(r.status().ok());
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_NE(r.status().message().find("OK Status"), std::string::npos);
}

TEST(Result, ValueAndStatusThroughConstAccessors) {
  const Result<std::string> v(std::string("abc"));
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(v.value(), "abc");
  EXPECT_EQ(*v, "abc");
  EXPECT_EQ(v->size(), 3u);
  const Result<std::string> e(Status::NotFound("gone"));
  EXPECT_FALSE(e.ok());
  EXPECT_TRUE(e.status().IsNotFound());
  // Move-only values move out of an rvalue Result.
  Result<std::unique_ptr<int>> p(std::make_unique<int>(7));
  std::unique_ptr<int> taken = *std::move(p);
  EXPECT_EQ(*taken, 7);
}

}  // namespace
}  // namespace dmindex
