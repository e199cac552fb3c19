#include "dmindex/global_address.h"

#include <cstdio>

namespace dmindex {

std::string GlobalAddress::ToString() const {
  if (is_null()) return "null";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%u:0x%llx", unsigned{node()},
                static_cast<unsigned long long>(offset()));
  return buf;
}

}  // namespace dmindex
