// The knob tables (common/knob_table.h): what a row accepts and refuses, the errors, lifting
// a table into a larger options struct, and that the knob tables of docs/ are exactly the
// generated ones (`dmindex knobs --markdown`), so they cannot drift from the code.
#include "common/knob_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "designs/registry.h"

namespace dmindex {
namespace {

struct Inner {
  bool flag = false;
};
struct Opts {
  bool on = true;
  uint64_t bytes = 4ull << 20;
  double ratio = 0.5;
  uint32_t level = 0;  // 0: off
  std::string mode = "a";
  Inner inner;
};

using Table = KnobTable<Opts>;

Table MakeTable() {
  const KnobTable<Inner> inner({KnobTable<Inner>::Switch("flag", &Inner::flag, "an inner switch")});
  std::vector<Table::Row> rows = {
      Table::Switch("on", &Opts::on, "a switch"),
      Table::Count("size_mb", 1, 64, &Opts::bytes, "a size", 20),
      Table::Real("ratio", {0, 1, false, true}, &Opts::ratio, "a fraction"),
      Table::Custom({"level", KnobKind::kCount, 1, 8, {}, "off", "", "a level or off"},
                    [](const KnobValue& v, Opts& o) {
                      o.level = v.word.empty() ? static_cast<uint32_t>(v.count) : 0;
                      return Status::Ok();
                    },
                    [](const Opts& o) { return o.level == 0 ? std::string("off") : std::to_string(o.level); }),
      Table::Choice("mode", "a|b|c", "a mode", [](Opts& o, std::string_view w) { o.mode = std::string(w); },
                    [](const Opts& o) { return o.mode; }),
  };
  for (auto& row : inner.Lifted(&Opts::inner)) rows.push_back(std::move(row));
  return Table(std::move(rows), "a note");
}

TEST(KnobTable, SetsEachKindAndShowsTheDefaults) {
  const Table t = MakeTable();
  Opts o;
  ASSERT_TRUE(t.ApplyAll({{"on", "off"}, {"size_mb", "8"}, {"ratio", "0.25"}, {"level", "3"}, {"mode", "c"}, {"flag", "on"}},
                         nullptr, &o)
                  .ok());
  EXPECT_FALSE(o.on);
  EXPECT_EQ(o.bytes, 8ull << 20);
  EXPECT_EQ(o.ratio, 0.25);
  EXPECT_EQ(o.level, 3u);
  EXPECT_EQ(o.mode, "c");
  EXPECT_TRUE(o.inner.flag);
  ASSERT_TRUE(t.Apply("level", "off", nullptr, &o).ok());
  EXPECT_EQ(o.level, 0u);

  const std::vector<KnobDoc> docs = t.Describe(Opts{});
  ASSERT_EQ(docs.size(), 6u);
  EXPECT_EQ(docs[0].values, "on/off");
  EXPECT_EQ(docs[0].default_value, "on");
  EXPECT_EQ(docs[1].values, "1..64");
  EXPECT_EQ(docs[1].default_value, "4");
  EXPECT_EQ(docs[2].values, "[0, 1)");
  EXPECT_EQ(docs[2].default_value, "0.5");
  EXPECT_EQ(docs[3].values, "off or 1..8");
  EXPECT_EQ(docs[3].default_value, "off");
  EXPECT_EQ(docs[4].values, "a|b|c");
  EXPECT_EQ(docs[5].name, "flag");
  EXPECT_EQ(docs[5].default_value, "off");
  EXPECT_EQ(KnobMarkdown({docs[4]}), "| knob | values | default | meaning |\n|---|---|---|---|\n| `mode` | a\\|b\\|c | a | a mode |\n");
}

TEST(KnobTable, RefusalsNameTheKnobTheValueAndWhatItTakes) {
  const Table t = MakeTable();
  Opts o;
  auto message = [&](std::string_view name, std::string_view value) { return t.Apply(name, value, nullptr, &o).message(); };
  EXPECT_EQ(message("on", "maybe"), "knob on: 'maybe': expected on or off");
  EXPECT_EQ(message("size_mb", "65"), "knob size_mb: '65': expected a whole number in [1, 64]");
  EXPECT_NE(message("ratio", "1").find("knob ratio: '1'"), std::string::npos);
  EXPECT_EQ(message("level", "on"), "knob level: 'on': expected a whole number in [1, 8]");
  EXPECT_EQ(message("mode", "d"), "knob mode: 'd': expected a, b or c");
  EXPECT_EQ(message("nope", "1"), "unknown knob 'nope' (known: on, size_mb, ratio, level, mode, flag; a note)");
  // Nothing was set by the refused values.
  EXPECT_TRUE(o.on);
  EXPECT_EQ(o.bytes, 4ull << 20);
  EXPECT_EQ(o.mode, "a");
}

// Every design that takes knobs lists them, each once, with a default and a doc line.
TEST(KnobTable, EveryDesignDescribesItsKnobs) {
  for (const std::string& d : designs::DesignNames()) {
    auto knobs = designs::DesignKnobs(d);
    ASSERT_TRUE(knobs.ok()) << d;
    std::set<std::string> names;
    for (const KnobDoc& k : *knobs) {
      EXPECT_TRUE(names.insert(k.name).second) << d << " lists " << k.name << " twice";
      EXPECT_FALSE(k.values.empty()) << d << " " << k.name;
      EXPECT_FALSE(k.default_value.empty()) << d << " " << k.name;
      EXPECT_FALSE(k.doc.empty()) << d << " " << k.name;
    }
    if (d == "local" || d == "absl") EXPECT_TRUE(knobs->empty()) << d;
    else EXPECT_FALSE(knobs->empty()) << d;
  }
  EXPECT_TRUE(designs::DesignKnobs("nope").status().IsInvalidArgument());
}

// The tables under "<!-- knobs DESIGN... -->" in docs/*.md are the generated ones (of each
// design named: rocksdb and lmdb share one), and every design with knobs has one somewhere.
TEST(KnobTable, DocsTablesAreTheGeneratedOnes) {
  std::set<std::string> documented;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(DMINDEX_SOURCE_DIR) + "/docs")) {
    if (entry.path().extension() != ".md") continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      const std::string marker = "<!-- knobs ";
      if (line.rfind(marker, 0) != 0) continue;
      std::istringstream names(line.substr(marker.size(), line.find(" -->") - marker.size()));
      std::string table, row;
      while (std::getline(in, row) && !row.empty()) table += row + "\n";
      for (std::string design; names >> design;) {
        auto knobs = designs::DesignKnobs(design);
        ASSERT_TRUE(knobs.ok()) << entry.path() << ": " << design;
        EXPECT_EQ(table, KnobMarkdown(*knobs))
            << entry.path().filename() << ": the knob table of " << design
            << " differs from `dmindex knobs --markdown " << design << "`: paste that in";
        documented.insert(design);
      }
    }
  }
  for (const std::string& d : designs::DesignNames()) {
    auto knobs = designs::DesignKnobs(d);
    if (knobs.ok() && !knobs->empty()) {
      EXPECT_TRUE(documented.count(d)) << "no knob table of " << d << " in docs/";
    }
  }
}

}  // namespace
}  // namespace dmindex
