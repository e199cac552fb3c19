// Journals of processes that may die at any instant (check/journal.h): what a killed
// writer's journal reads back as, and how its in-flight operations count in the checks.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>

#include "check/checker.h"
#include "check/journal.h"

namespace dmindex::check {
namespace {

class JournalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "dmindex-journal-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void AppendRaw(const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::app | std::ios::binary);
    out << text;
  }
  std::string dir_;
};

TEST_F(JournalTest, ReadsBackAnsweredRefusedAndInFlightOperations) {
  const std::string path = Path("j");
  {
    auto j = OpJournal::Create(path);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    auto insert = (*j)->Invoke(OpKind::kInsert, "k1", "v1");
    ASSERT_TRUE((*j)->Respond(*insert, Outcome::kOk).ok());
    auto lookup = (*j)->Invoke(OpKind::kLookup, std::string("k\0\xff", 3), "");
    ASSERT_TRUE((*j)->Respond(*lookup, Outcome::kOk, std::string("\0v", 2)).ok());
    auto refused = (*j)->Invoke(OpKind::kUpdate, "k2", "v2");
    ASSERT_TRUE((*j)->Refused(*refused).ok());
    auto failed = (*j)->Invoke(OpKind::kDelete, "k1", "");
    ASSERT_TRUE((*j)->Respond(*failed, Outcome::kUnknown).ok());
    ASSERT_TRUE((*j)->Invoke(OpKind::kInsert, "k3", "v3").ok());  // the process dies here
  }
  AppendRaw(path, "r 4 o - 12");  // and inside the write of its response: cut short, ignored
  auto read = ReadJournal(path, 7, 1);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->ops.size(), 4u);
  EXPECT_EQ(read->pending, 1u);
  EXPECT_EQ(read->unknown, 1u);
  EXPECT_EQ(read->ops[0].kind, OpKind::kInsert);
  EXPECT_EQ(read->ops[0].value, "v1");
  EXPECT_EQ(read->ops[0].outcome, Outcome::kOk);
  EXPECT_LE(read->ops[0].invoke_ns, read->ops[0].response_ns);
  EXPECT_EQ(read->ops[1].key, std::string("k\0\xff", 3));
  EXPECT_EQ(read->ops[1].value, std::string("\0v", 2));
  EXPECT_EQ(read->ops[2].kind, OpKind::kDelete);
  EXPECT_EQ(read->ops[2].outcome, Outcome::kUnknown);
  const Operation& pending = read->ops[3];
  EXPECT_EQ(pending.key, "k3");
  EXPECT_EQ(pending.outcome, Outcome::kUnknown);
  EXPECT_EQ(pending.response_ns, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(pending.process, 7u);
  EXPECT_EQ(pending.thread, 1u);
}

// The soak fails a trial whose thread answered many unknown outcomes in a row (a storm of
// Unavailable after a restart instead of a wait): the journal counts the longest such run.
TEST_F(JournalTest, CountsTheMostUnknownOutcomesAnsweredInARow) {
  const std::string path = Path("j");
  {
    auto j = OpJournal::Create(path);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    const Outcome outcomes[] = {Outcome::kUnknown, Outcome::kUnknown, Outcome::kOk,      Outcome::kUnknown,
                                Outcome::kUnknown, Outcome::kUnknown, Outcome::kNotFound, Outcome::kUnknown};
    for (Outcome outcome : outcomes) {
      auto op = (*j)->Invoke(OpKind::kLookup, "k", "");
      ASSERT_TRUE((*j)->Respond(*op, outcome).ok());
    }
    ASSERT_TRUE((*j)->Invoke(OpKind::kInsert, "k", "v").ok());  // in flight: not an answer
  }
  auto read = ReadJournal(path, 1, 0);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->unknown, 6u);
  EXPECT_EQ(read->longest_unknown_run, 3u);
}

TEST_F(JournalTest, RefusesAMalformedLineAndAnExistingFile) {
  const std::string path = Path("bad");
  AppendRaw(path, "i 0 i 6b 76 5\nr 0 z - 6\n");
  auto read = ReadJournal(path, 1, 0);
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(read.status().IsInvalidArgument());
  EXPECT_NE(read.status().message().find("line 2"), std::string::npos) << read.status().ToString();
  EXPECT_FALSE(OpJournal::Create(path).ok());  // a journal is never appended to by two processes
  EXPECT_FALSE(ReadJournal(Path("missing"), 1, 0).ok());
}

// A killed writer's in-flight write may have landed: a later read of its value is
// linearizable, and a read of a value nobody wrote is not.
TEST_F(JournalTest, AnInFlightWriteOfADeadProcessMayHaveTakenEffect) {
  {
    auto dead = OpJournal::Create(Path("dead"));
    auto first = (*dead)->Invoke(OpKind::kInsert, "k", "v1");
    ASSERT_TRUE((*dead)->Respond(*first, Outcome::kOk).ok());
    ASSERT_TRUE((*dead)->Invoke(OpKind::kInsert, "k", "v2").ok());
  }
  const auto history_reading = [&](const std::string& name, const Value& seen) {
    {
      auto live = OpJournal::Create(Path(name));
      auto look = (*live)->Invoke(OpKind::kLookup, "k", "");
      EXPECT_TRUE((*live)->Respond(*look, Outcome::kOk, seen).ok());
    }
    History h;
    for (const auto& [file, process] : {std::pair{std::string("dead"), 1u}, std::pair{name, 2u}}) {
      auto read = ReadJournal(Path(file), process, 0);
      EXPECT_TRUE(read.ok()) << read.status().ToString();
      for (Operation& op : read->ops) h.ops.push_back(std::move(op));
    }
    std::stable_sort(h.ops.begin(), h.ops.end(), [](const auto& a, const auto& b) { return a.invoke_ns < b.invoke_ns; });
    return h;
  };
  EXPECT_TRUE(CheckHistory(history_reading("saw-v2", "v2")).ok());
  EXPECT_TRUE(CheckHistory(history_reading("saw-v1", "v1")).ok());
  EXPECT_FALSE(CheckHistory(history_reading("saw-v3", "v3")).ok());
  // Its final state may be either write's, never the initial absence.
  History h = history_reading("final", "v2");
  EXPECT_TRUE(CheckFinalState(h, {{"k", "v2"}}).ok());
  EXPECT_TRUE(CheckFinalState(h, {{"k", "v1"}}).ok());
  EXPECT_FALSE(CheckFinalState(h, {}).ok());
}

}  // namespace
}  // namespace dmindex::check
