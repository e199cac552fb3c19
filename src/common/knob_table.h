// Knob tables: a design declares its knobs (IndexOptions::knobs, `--design d:knob=value`)
// once, one row each: name, kind, accepted values, a one-line doc, how it sets the design's
// options and how it shows them. From that one table come the parsing (values read with the
// rules of common/knobs.h, so errors name the knob, the value and what was expected), the
// list of known knobs in errors, `dmindex knobs` and `dmindex bench --list`, and the knob
// tables of docs/ (tests/knob_table_test.cc checks those equal the generated ones). The
// default column is the row's `show` of the design's default options, so it cannot drift
// from the code. (RocksDB's OptionTypeInfo is the same idea.)
//
// The entry point for anything that holds name/value pairs (IndexOptions::knobs, an options
// string) is KnobTable::Apply(name, value, ...), one pair at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/parse_values.h"
#include "dmindex/options.h"
#include "dmindex/status.h"

namespace dmindex {

enum class KnobKind : uint8_t {
  kSwitch,  // on/off (true/false, 1/0)
  kCount,   // a whole number in [min, max], or one of `words`
  kReal,    // a real number in `real`, or one of `words`
  kChoice,  // one of `words`
  kText,    // anything the row's setter accepts; `values` says what
};

// What a row says about its knob apart from what it sets: enough to read and document a value.
struct KnobSpec {
  std::string name;
  KnobKind kind = KnobKind::kSwitch;
  uint64_t min = 0, max = 0;  // kCount
  RealRange real;             // kReal
  std::string words;          // kChoice: the words, '|'-separated; kCount/kReal: accepted besides a number
  std::string values;         // kText: what it takes ("a directory"); others: derived (Values())
  std::string doc;            // one line

  // The accepted values as the docs write them: "on/off", "0..32", "[0, 1]", "art|btree",
  // "off or 1..16777216".
  std::string Values() const;
};

// A value as its row read it: the field of the row's kind is set (or `word`, when the text
// was one of the row's words).
struct KnobValue {
  std::string_view name, text;
  bool on = false;
  uint64_t count = 0;
  double real = 0;
  std::string_view word;
  const IndexOptions* index = nullptr;  // the options whose knobs these are; may be null
};

// Reads `text` as `spec` says; InvalidArgument "knob <name>: '<text>': expected ..." if it
// does not fit.
Status ReadKnob(const KnobSpec& spec, std::string_view text, KnobValue* out);

// A knob as the docs and `dmindex knobs` show it.
struct KnobDoc {
  std::string name, values, default_value, doc;
};

// A markdown table (knob | values | default | meaning) of `knobs`, one line each, in order.
std::string KnobMarkdown(const std::vector<KnobDoc>& knobs);
// Plain text, one knob a line, for terminals ("  name  values (default d)  doc").
std::string KnobText(const std::vector<KnobDoc>& knobs);

// InvalidArgument for a knob no row names, listing the known ones (and `note`, if any).
Status UnknownKnob(std::string_view name, const std::vector<std::string>& known, std::string_view note);

template <class O>
struct Knob {
  KnobSpec spec;
  std::function<Status(const KnobValue&, O&)> set;
  std::function<std::string(const O&)> show;
};

template <class O>
class KnobTable {
 public:
  using Row = Knob<O>;

  // `note`: appended to the unknown-knob error (why some familiar knob is not among these).
  explicit KnobTable(std::vector<Row> rows, std::string note = "") : rows_(std::move(rows)), note_(std::move(note)) {}

  // Sets knob `name` to `text` in *o. InvalidArgument naming the knob for a bad value, and
  // listing the known knobs for an unknown name. `index`: the options the knob came with (a
  // row may need the key format); may be null.
  Status Apply(std::string_view name, std::string_view text, const IndexOptions* index, O* o) const {
    const Row* row = Find(name);
    if (row == nullptr) return UnknownKnob(name, Names(), note_);
    KnobValue v;
    v.index = index;
    DMX_RETURN_IF_ERROR(ReadKnob(row->spec, text, &v));
    return row->set(v, *o);
  }

  // Apply for every pair, in order; the first error stops.
  Status ApplyAll(const std::map<std::string, std::string>& knobs, const IndexOptions* index, O* o) const {
    for (const auto& [name, text] : knobs) DMX_RETURN_IF_ERROR(Apply(name, text, index, o));
    return Status::Ok();
  }

  const Row* Find(std::string_view name) const {
    for (const Row& r : rows_)
      if (r.spec.name == name) return &r;
    return nullptr;
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const Row& r : rows_) names.push_back(r.spec.name);
    return names;
  }
  const std::vector<Row>& rows() const { return rows_; }

  // Each knob with its value in `defaults` as the default.
  std::vector<KnobDoc> Describe(const O& defaults) const {
    std::vector<KnobDoc> out;
    for (const Row& r : rows_) out.push_back({r.spec.name, r.spec.Values(), r.show(defaults), r.spec.doc});
    return out;
  }

  // These rows acting on the member `part` of an `Outer` (the tree core's knobs on a design's
  // options), except those named in `except` (the design's own rows replace them, or they do
  // not apply).
  template <class Outer>
  std::vector<Knob<Outer>> Lifted(O Outer::*part, const std::vector<std::string>& except = {}) const {
    std::vector<Knob<Outer>> out;
    for (const Row& r : rows_) {
      bool skip = false;
      for (const std::string& e : except) skip |= e == r.spec.name;
      if (skip) continue;
      out.push_back({r.spec, [set = r.set, part](const KnobValue& v, Outer& o) { return set(v, o.*part); },
                     [show = r.show, part](const Outer& o) { return show(o.*part); }});
    }
    return out;
  }

  // Row builders. A switch or count on a plain field sets and shows it; `shift` scales a
  // count to the field (cache_mb -> bytes: 20).
  static Row Switch(std::string name, bool O::*field, std::string doc) {
    return {{std::move(name), KnobKind::kSwitch, 0, 0, {}, "", "", std::move(doc)},
            [field](const KnobValue& v, O& o) {
              o.*field = v.on;
              return Status::Ok();
            },
            [field](const O& o) { return std::string(o.*field ? "on" : "off"); }};
  }
  template <class T>
  static Row Count(std::string name, uint64_t min, uint64_t max, T O::*field, std::string doc, int shift = 0) {
    return {{std::move(name), KnobKind::kCount, min, max, {}, "", "", std::move(doc)},
            [field, shift](const KnobValue& v, O& o) {
              o.*field = static_cast<T>(v.count << shift);
              return Status::Ok();
            },
            [field, shift](const O& o) { return std::to_string(static_cast<uint64_t>(o.*field) >> shift); }};
  }
  static Row Real(std::string name, RealRange range, double O::*field, std::string doc) {
    return {{std::move(name), KnobKind::kReal, 0, 0, range, "", "", std::move(doc)},
            [field](const KnobValue& v, O& o) {
              o.*field = v.real;
              return Status::Ok();
            },
            [field](const O& o) { return FormatNumber(o.*field); }};
  }
  // One of `words` ('|'-separated), set and shown by the caller's functions.
  static Row Choice(std::string name, std::string words, std::string doc, std::function<void(O&, std::string_view)> set,
                    std::function<std::string(const O&)> show) {
    return {{std::move(name), KnobKind::kChoice, 0, 0, {}, std::move(words), "", std::move(doc)},
            [set = std::move(set)](const KnobValue& v, O& o) {
              set(o, v.word);
              return Status::Ok();
            },
            std::move(show)};
  }
  // Any kind, with its own setter and shower (words, scaled or derived fields, checks).
  static Row Custom(KnobSpec spec, std::function<Status(const KnobValue&, O&)> set,
                    std::function<std::string(const O&)> show) {
    return {std::move(spec), std::move(set), std::move(show)};
  }

 private:
  std::vector<Row> rows_;
  std::string note_;
};

}  // namespace dmindex
