#include "common/parse_values.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace dmindex {
namespace {

Status Bad(std::string_view text, const std::string& expected) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "'" + std::string(...).
  std::string m(1, '\'');
  m.append(text).append("': expected ").append(expected);
  return Status::InvalidArgument(std::move(m));
}

std::string CountRange(uint64_t min, uint64_t max) {
  if (max == std::numeric_limits<uint64_t>::max())
    return min == 0 ? "a whole number >= 0" : "a whole number >= " + std::to_string(min);
  return "a whole number in [" + std::to_string(min) + ", " + std::to_string(max) + "]";
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// Digits to an integer; false on overflow.
bool ToUnsigned(std::string_view digits, uint64_t* out) {
  uint64_t v = 0;
  for (char c : digits) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

// strtod over the whole text, finite only; false otherwise.
bool ToFinite(std::string_view text, double* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) return false;
  const std::string s(text);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return false;
  // ERANGE on underflow still yields a usable (tiny or zero) value; on overflow v is inf.
  *out = v;
  return true;
}

}  // namespace

std::string FormatNumber(double v) {
  char buf[40];
  if (std::isfinite(v) && std::fabs(v) < 1e15 && v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool RealRange::Contains(double v) const {
  return (min_open ? v > min : v >= min) && (max_open ? v < max : v <= max);
}

std::string RealRange::ToString() const {
  std::string out;
  if (max == std::numeric_limits<double>::max() && !max_open)
    return out.append(min_open ? "> " : ">= ").append(FormatNumber(min));
  out.append(min_open ? "(" : "[").append(FormatNumber(min)).append(", ");
  return out.append(FormatNumber(max)).append(max_open ? ")" : "]");
}

Result<uint64_t> ParseCount(std::string_view text, uint64_t min, uint64_t max) {
  const std::string expected = CountRange(min, max);
  if (!text.empty() && text.front() == '-' && AllDigits(text.substr(1)))
    return Bad(text, expected + " (negative values are not allowed)");
  uint64_t v = 0;
  if (!AllDigits(text)) return Bad(text, expected);
  if (!ToUnsigned(text, &v) || v < min || v > max) return Bad(text, expected);
  return v;
}

Result<double> ParseReal(std::string_view text, RealRange range) {
  const std::string expected = "a number " + range.ToString();
  double v = 0;
  if (!ToFinite(text, &v) || !range.Contains(v)) return Bad(text, expected);
  return v;
}

Result<uint64_t> ParseByteSize(std::string_view text, uint64_t min, uint64_t max) {
  std::string expected = "a size such as 4096, 64K, 32M, 4G";
  if (min > 0 || max != std::numeric_limits<uint64_t>::max())
    expected += ", in [" + std::to_string(min) + ", " + std::to_string(max) + "] bytes";
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  uint64_t value = 0;
  if (digits == 0 || !ToUnsigned(text.substr(0, digits), &value)) return Bad(text, expected);
  std::string suffix;
  for (char c : text.substr(digits)) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (suffix.size() >= 3 && suffix.ends_with("IB")) suffix.resize(suffix.size() - 2);
  else if (suffix.size() >= 2 && suffix.back() == 'B') suffix.pop_back();
  int shift = 0;
  if (suffix.empty() || suffix == "B") shift = 0;
  else if (suffix == "K") shift = 10;
  else if (suffix == "M") shift = 20;
  else if (suffix == "G") shift = 30;
  else if (suffix == "T") shift = 40;
  else return Bad(text, expected);
  if (shift > 0 && value > (std::numeric_limits<uint64_t>::max() >> shift)) return Bad(text, expected);
  value <<= shift;
  if (value < min || value > max) return Bad(text, expected);
  return value;
}

Result<double> ParseDuration(std::string_view text, double bare_unit_seconds, RealRange range) {
  // The range is shown in the bare unit, which is what the user typed.
  RealRange shown = range;
  shown.min /= bare_unit_seconds;
  if (shown.max != std::numeric_limits<double>::max()) shown.max /= bare_unit_seconds;
  const std::string expected = "a duration " + shown.ToString() +
                               (bare_unit_seconds == 1e-3 ? " ms" : " s") +
                               " (a number, optionally with a unit: us, ms, s, m, h)";
  size_t unit_at = text.size();
  while (unit_at > 0 && std::isalpha(static_cast<unsigned char>(text[unit_at - 1]))) --unit_at;
  const std::string_view unit = text.substr(unit_at);
  double scale = bare_unit_seconds;
  if (unit == "us") scale = 1e-6;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "s") scale = 1;
  else if (unit == "m") scale = 60;
  else if (unit == "h") scale = 3600;
  else if (!unit.empty()) return Bad(text, expected);
  double v = 0;
  if (!ToFinite(text.substr(0, unit_at), &v)) return Bad(text, expected);
  const double seconds = v * scale;
  if (!std::isfinite(seconds) || !range.Contains(seconds)) return Bad(text, expected);
  return seconds;
}

}  // namespace dmindex
