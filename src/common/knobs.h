// Design knobs: the "name=value" strings of IndexOptions::knobs (e.g. dex:offload_level=2).
// Read with the rules of common/parse_values.h, so a knob refuses exactly the bad values a
// command-line flag refuses; the error names the knob ("knob offload_level: '40': expected a
// whole number in [0, 32]"). Every design's knob parser goes through these.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/parse_values.h"
#include "dmindex/status.h"

namespace dmindex {

// on/off, true/false, 1/0.
Status KnobSwitch(std::string_view knob, std::string_view value, bool* out);
Status KnobCount(std::string_view knob, std::string_view value, uint64_t min, uint64_t max, uint64_t* out);
Status KnobReal(std::string_view knob, std::string_view value, RealRange range, double* out);
// Any other refusal of a knob's value, in the same form.
Status BadKnob(std::string_view knob, std::string_view value, std::string_view expected);

}  // namespace dmindex
