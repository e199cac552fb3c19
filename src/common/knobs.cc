#include "common/knobs.h"

#include <string>

namespace dmindex {
namespace {

// "knob <name>: " before the value parser's "'<value>': expected ...".
Status Named(std::string_view knob, const Status& s) {
  std::string m("knob ");
  m.append(knob).append(": ").append(s.message());
  return Status::InvalidArgument(std::move(m));
}

}  // namespace

Status BadKnob(std::string_view knob, std::string_view value, std::string_view expected) {
  std::string m("knob ");
  m.append(knob).append(": '").append(value).append("': expected ").append(expected);
  return Status::InvalidArgument(std::move(m));
}

Status KnobSwitch(std::string_view knob, std::string_view value, bool* out) {
  if (value == "on" || value == "true" || value == "1") {
    *out = true;
  } else if (value == "off" || value == "false" || value == "0") {
    *out = false;
  } else {
    return BadKnob(knob, value, "on or off");
  }
  return Status::Ok();
}

Status KnobCount(std::string_view knob, std::string_view value, uint64_t min, uint64_t max, uint64_t* out) {
  auto n = ParseCount(value, min, max);
  if (!n.ok()) return Named(knob, n.status());
  *out = *n;
  return Status::Ok();
}

Status KnobReal(std::string_view knob, std::string_view value, RealRange range, double* out) {
  auto d = ParseReal(value, range);
  if (!d.ok()) return Named(knob, d.status());
  *out = *d;
  return Status::Ok();
}

}  // namespace dmindex
