// Numbers, byte sizes and durations as people type them on command lines and in property
// files, each checked against the limits of what it configures. One place for all of it, so
// that every command refuses the same bad values the same way: negative counts, NaN, values
// out of range, trailing garbage, overflow. Errors are InvalidArgument and name the text and
// the accepted range (numbers in messages are short: 1e+12, never 300 digits).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "dmindex/status.h"

namespace dmindex {

// A whole number in [min, max], written in decimal digits only ("12", not "-5", "1.5",
// "0x10" or "1e6"; surrounding blanks are an error too).
Result<uint64_t> ParseCount(std::string_view text, uint64_t min = 0,
                            uint64_t max = std::numeric_limits<uint64_t>::max());

// Bounds of a real value; an open bound excludes its end (theta in [0, 1)).
struct RealRange {
  double min = 0;
  double max = std::numeric_limits<double>::max();
  bool min_open = false;
  bool max_open = false;
  bool Contains(double v) const;
  std::string ToString() const;  // "[0, 1)", "> 0", ...
};

// A finite decimal number inside `range` ("0.5", "1e-3"; never nan or inf).
Result<double> ParseReal(std::string_view text, RealRange range);

// "4096", "64K", "32M", "4G", "1T" (binary multiples, case-insensitive, optional trailing
// "B" or "iB"), in [min, max] bytes.
Result<uint64_t> ParseByteSize(std::string_view text, uint64_t min = 0,
                               uint64_t max = std::numeric_limits<uint64_t>::max());

// A duration: a number with an optional unit (us, ms, s, m, h); a bare number is in
// `bare_unit_seconds` (1 for seconds, 1e-3 for milliseconds). Returns seconds, in `range`
// (given in seconds).
Result<double> ParseDuration(std::string_view text, double bare_unit_seconds, RealRange range);

// A number for messages: integers exactly up to 1e15, anything else with 6 significant digits.
std::string FormatNumber(double v);

}  // namespace dmindex
