// What graintune's start check saw at the trainer's real start (docs/start-check.md): written by
// the check in the trainer's own Python (launcher/python/graintune_start_check.py) into the
// exporter's folder as start-check.json, read by the exporter and served in its /steps
// document as "start_check", read by the operator from there:
//   {"checked": true, "written_value": 1, "started_value": 2, "changed": true,
//    "why": "it resumes step 5, whose Grain iterator was saved with 2 workers (the start said 1)",
//    "admission_value": 1, "seconds": 28.6,
//    "keys": {"dataset_type": "grain", "enable_checkpointing": true, "checkpoint_dir": "gs://...", ...},
//    "checkpoint": {"layout": "per-worker", "step": 5, "saved_workers": 2, "why": "..."}}
// `checked` false: MaxText's loader could not say (the check failed open and the trainer started
// as written; `why` says what failed). `written_value` is what the start said (MaxText's view);
// `started_value` what it started with; either is absent when the count came from nowhere the
// check could read. `fill_value`: graintune's value for a start that leaves the count to MaxText
// (-1), where admission could not rewrite it. Parsing is bounded (the file is written in a pod its owner controls): texts
// are cut, numbers range-checked, unknown fields ignored, and a malformed file is an error.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace graintune::telemetry {

// The report's file name in the exporter's folder (beside MaxText's metrics file).
inline constexpr char kStartCheckReportFileName[] = "start-check.json";
inline constexpr size_t kMaxStartCheckReportBytes = 64 * 1024;

// The Grain iterator state the run's latest checkpoint holds.
struct SavedIterator {
  std::string layout;  // "none", "no-iterator", "per-worker", "elastic", "unreadable"
  std::optional<long> step;
  std::optional<int> saved_workers;  // per-worker only
  std::string why;
};

struct StartCheckReport {
  bool checked = false;
  bool changed = false;
  std::optional<int> admission_value, written_value, started_value;
  // graintune's value for a start that left the count to MaxText (-1), when admission gave one.
  std::optional<int> fill_value;
  std::string why;
  double seconds = 0;
  // The keys of MaxText's config that decide the count, as MaxText resolved them.
  std::string dataset_type, checkpoint_dir;
  std::optional<bool> enable_checkpointing, elastic_iterator;
  std::optional<SavedIterator> checkpoint;
};

nlohmann::json ToJson(const StartCheckReport& report);
Result<StartCheckReport> StartCheckReportFromJson(const nlohmann::json& document);
// The file's text (at most kMaxStartCheckReportBytes).
Result<StartCheckReport> ParseStartCheckReport(const std::string& text);

}  // namespace graintune::telemetry
