// The micro-benchmarks' key set: kBenchKeys distinct random u64 keys (fixed seed) as 8-byte
// big-endian strings, in an insert order and, shuffled again, an order for the operations.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "dmindex/types.h"

namespace dmindex::bench {

inline constexpr size_t kBenchKeys = 1'000'000;

struct RandomKeys {
  std::vector<std::string> insert_order;
  std::vector<std::string> lookup_order;
  RandomKeys() {
    std::mt19937_64 rng(42);
    std::vector<uint64_t> k;
    k.reserve(kBenchKeys + kBenchKeys / 8);
    while (k.size() < kBenchKeys + kBenchKeys / 16) k.push_back(rng() | 1);  // odd: never 0, the reserved key
    std::sort(k.begin(), k.end());
    k.erase(std::unique(k.begin(), k.end()), k.end());
    std::shuffle(k.begin(), k.end(), rng);
    k.resize(kBenchKeys);
    for (uint64_t v : k) insert_order.push_back(U64Key(v).str());
    lookup_order = insert_order;
    std::shuffle(lookup_order.begin(), lookup_order.end(), rng);
  }
};

inline const RandomKeys& TheKeys() {
  static const RandomKeys keys;
  return keys;
}

}  // namespace dmindex::bench
