// Every unit of an IndeXY X, in key order, listed by `w` (handles cleared: units outlive the
// walk), for tests that release or clean units one by one.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "designs/indexy/x_index.h"

namespace dmindex::designs::indexy {

inline std::vector<XUnit> AllUnits(XWorker& w) {
  std::vector<XUnit> all;
  EXPECT_TRUE(w.ForEachUnit("", [&](XUnit& u) {
    u.handle = nullptr;
    all.push_back(u);
    return true;
  }).ok());
  return all;
}

}  // namespace dmindex::designs::indexy
