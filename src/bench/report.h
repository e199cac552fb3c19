// Output of the bench driver: an aligned terminal table (throughput ratios against a
// baseline design), JSON (one record per design x workload) and CSV with the same fields.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/run_result.h"
#include "dmindex/status.h"

namespace dmindex::bench {

// What the terminal table shows: kDefault, the figures most people compare (design, Mops/s,
// the ratio to the baseline, p50/p99, round trips and bytes per operation, the client's cache
// memory, the check), then a line per run with its other figures that are not zero; kAll, every
// figure as a column (`dmindex bench --columns all`; the JSON and CSV files always have all).
enum class TableColumns { kDefault, kAll };
// The default table's width with the registered designs' names (a terminal's 120 columns).
inline constexpr size_t kCompactWidth = 120;

// Rows grouped by workload; "x<base>" is throughput relative to `baseline` on the same
// workload ("-" where the baseline did not run it). Columns (kAll) or figures (kDefault) of
// design-specific counters appear only where some run has them.
std::string FormatTable(const std::vector<RunResult>& results, const std::string& baseline,
                        TableColumns columns = TableColumns::kDefault);

// Throughput and round trips per operation per interval of every run with a timeline, two
// columns per run ("*": its
// repartitioning ran during the interval), then a line per scheduled repartitioning: when it
// ran, the keys it moved, throughput before it, the lowest interval, when throughput came
// back to 90%. Empty when no run has a timeline.
std::string FormatTimeline(const std::vector<RunResult>& results);

// One flat record: design, workload, threads, keys, ops, throughput_ops, p50_us, p99_us,
// p999_us, reads/writes/atomics/rpcs/round_trips/bytes _per_op, offloads_per_op,
// offload_fallbacks_per_op, cache_hit_ratio (null without
// cache activity), cache_bytes, pool_bytes, the run's status fields, timeline_interval_s and
// timeline (an array of {start_s, end_s, ops, throughput_ops, round_trips,
// round_trips_per_op}), repartition (null, or the
// move, its times and the dip).
nlohmann::ordered_json ToJson(const RunResult& result);

// A JSON array of ToJson records.
Status WriteJson(const std::string& path, const std::vector<RunResult>& results);
// The same fields as CSV, header first. Nested fields are flattened: repartition.start_s
// becomes repartition_start_s; arrays become space-separated lists in one cell (the timeline:
// timeline_start_s, timeline_end_s, timeline_ops, timeline_throughput_ops, ...).
Status WriteCsv(const std::string& path, const std::vector<RunResult>& results);

}  // namespace dmindex::bench
