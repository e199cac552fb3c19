#include "common/knob_table.h"

#include <algorithm>

#include "common/knobs.h"

namespace dmindex {
namespace {

// True if `text` is one of the '|'-separated `words`.
bool IsWord(std::string_view words, std::string_view text) {
  size_t at = 0;
  while (at <= words.size()) {
    size_t end = words.find('|', at);
    if (end == std::string_view::npos) end = words.size();
    if (end > at && words.substr(at, end - at) == text) return true;
    at = end + 1;
  }
  return false;
}

// "a|b|c" -> "a, b or c" for messages; with `more`, every word ends with ", " ("a, b, c, ").
std::string Alternatives(std::string_view words, bool more = false) {
  std::string out;
  size_t at = 0;
  while (at < words.size()) {
    size_t end = words.find('|', at);
    const bool last = end == std::string_view::npos;
    if (last) end = words.size();
    if (!out.empty() && !more) out += last ? " or " : ", ";
    out.append(words.substr(at, end - at));
    if (more) out += ", ";
    at = end + 1;
  }
  return out;
}

// "|" would split a markdown table's cell.
std::string Cell(std::string text) {
  std::string out;
  for (char c : text) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

}  // namespace

std::string KnobSpec::Values() const {
  // "auto, off or 1..N": the words, then the numbers.
  std::string besides = words.empty() ? "" : Alternatives(words, true);
  if (!besides.empty()) besides.replace(besides.size() - 2, 2, " or ");
  switch (kind) {
    case KnobKind::kSwitch:
      return "on/off";
    case KnobKind::kCount:
      return besides + std::to_string(min) + ".." + std::to_string(max);
    case KnobKind::kReal:
      return besides + real.ToString();
    case KnobKind::kChoice:
      return words;
    case KnobKind::kText:
      return values;
  }
  return values;
}

Status ReadKnob(const KnobSpec& spec, std::string_view text, KnobValue* out) {
  out->name = spec.name;
  out->text = text;
  if (spec.kind != KnobKind::kSwitch && IsWord(spec.words, text)) {
    out->word = text;
    return Status::Ok();
  }
  switch (spec.kind) {
    case KnobKind::kSwitch:
      return KnobSwitch(spec.name, text, &out->on);
    case KnobKind::kCount:
      return KnobCount(spec.name, text, spec.min, spec.max, &out->count);
    case KnobKind::kReal:
      return KnobReal(spec.name, text, spec.real, &out->real);
    case KnobKind::kChoice:
      return BadKnob(spec.name, text, Alternatives(spec.words));
    case KnobKind::kText:
      return Status::Ok();
  }
  return Status::Ok();
}

Status UnknownKnob(std::string_view name, const std::vector<std::string>& known, std::string_view note) {
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  std::string m = "unknown knob '" + std::string(name) + "' (known: " + (list.empty() ? "none" : list);
  if (!note.empty()) m.append("; ").append(note);
  return Status::InvalidArgument(m + ")");
}

std::string KnobMarkdown(const std::vector<KnobDoc>& knobs) {
  std::string out = "| knob | values | default | meaning |\n|---|---|---|---|\n";
  for (const KnobDoc& k : knobs)
    out += "| `" + k.name + "` | " + Cell(k.values) + " | " + Cell(k.default_value) + " | " + Cell(k.doc) + " |\n";
  return out;
}

std::string KnobText(const std::vector<KnobDoc>& knobs) {
  size_t width = 0;
  for (const KnobDoc& k : knobs) width = std::max(width, k.name.size());
  std::string out;
  for (const KnobDoc& k : knobs)
    out += "  " + k.name + std::string(width + 2 - k.name.size(), ' ') + k.values + " (default " + k.default_value +
           "): " + k.doc + "\n";
  return out;
}

}  // namespace dmindex
