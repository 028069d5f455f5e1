#include "cli/explain_text.h"

#include <string>

#include "tuner/figures.h"
#include "webhook/worker_count_planner.h"

namespace graintune::cli {
namespace {

using nlohmann::json;
using webhook::PlanOutcome;

std::string Headline(const json& entry) {
  const std::string outcome = entry["outcome"];
  if (outcome == ToString(PlanOutcome::kTuned)) return "";
  if (outcome == ToString(PlanOutcome::kDeferred))
    return "tuning deferred: grain_worker_count=-1 found, but no TPU host is known for it yet;\n"
           "          its pods are tuned when they are created (see the warning)";
  if (outcome == ToString(PlanOutcome::kRecommendOnly))
    return "recommend only (policy mode Off): nothing changed; graintune would set " +
           std::to_string(entry["workers"].get<int>());
  if (outcome == ToString(PlanOutcome::kKeptAsWritten))
    return "kept as written: graintune already set this attempt's value";
  if (outcome == ToString(PlanOutcome::kLeftToMaxText))
    return "left as written for MaxText to pick: it may refuse a value graintune would write\n"
           "          (see the reason)";
  if (outcome == ToString(PlanOutcome::kLeftToStartCheck))
    return "left as written; the start check starts the trainer with " + std::to_string(entry["workers"].get<int>()) +
           " where it reads -1\n          (the checkpoint's saved count on a resume; never more than MaxText accepts)";
  if (outcome == ToString(PlanOutcome::kOverBudget))
    return "left unchanged: over the webhook's work budget";
  return "no grain_worker_count=-1 to tune";
}

// The demand key and the GrainTunings whose learned figures set the value.
void PrintLearning(const json& entry, std::ostream& out) {
  const std::string key = entry["demand_key"].get<std::string>();
  out << "  demand  key " << (key.empty() ? "none (the host's machine type is unknown)" : key) << "\n";
  std::string from;
  for (const json& g : entry["learned_from"]) from += (from.empty() ? "GrainTuning " : ", ") + g.get<std::string>();
  out << "  learned " << (from.empty() ? "nothing" : "from " + from) << " (learning spans "
      << entry["learning_spans"].get<std::string>() << ")\n";
}

}  // namespace

void PrintExplainText(const json& report, std::ostream& out) {
  for (const json& e : report) {
    out << e["object"].get<std::string>() << "\n";
    if (std::string headline = Headline(e); !headline.empty()) out << "  " << headline << "\n";
    for (const json& f : e["found"]) {
      out << "  found   " << f["key"].get<std::string>() << "=" << f["before"].get<std::string>()
          << " in container " << f["container"].get<std::string>() << " ("
          << f["where"].get<std::string>() << ", " << f["pointer"].get<std::string>() << ")\n"
          << "  value   "
          << (!f.contains("left") ? std::to_string(f["value"].get<int>())
              : f.contains("start_fill")
                  ? "-1 as written, " + std::to_string(f["start_fill"].get<int>()) + " at the start check: " +
                        f["left"].get<std::string>()
                  : "-1, left to MaxText: " + f["left"].get<std::string>())
          << "\n";
      // A container that reads its run otherwise than the trainer (an init container, an
      // ahead-of-time compile) says so.
      if (f.contains("resume") && e.contains("resume") && f["resume"] != e["resume"])
        out << "  its own " << (f["resume"]["pins_workers"].get<bool>() ? "keeps its value" : "may change")
            << ": " << f["resume"]["why"].get<std::string>() << "\n";
    }
    if (e.contains("host"))
      out << "  host    " << e["host"]["source"].get<std::string>() << ": "
          << Fixed(e["host"]["cpu_cores"].get<double>(), 1) << " cpu, "
          << Bytes(e["host"]["memory_bytes"].get<double>()) << ", "
          << e["host"]["tpu_chips"].get<int>() << " chips\n";
    out << "  policy  " << e["policy"].get<std::string>() << "\n";
    if (e.contains("demand_key")) PrintLearning(e, out);
    if (e.contains("resume"))
      out << "  resume  " << (e["resume"]["pins_workers"].get<bool>() ? "keeps its value" : "may change")
          << ": " << e["resume"]["why"].get<std::string>() << "\n";
    if (!e["reason"].get<std::string>().empty())
      out << "  reason  " << e["reason"].get<std::string>() << "\n";
    if (e.contains("lap")) out << "  lap     " << e["lap"].get<std::string>() << "\n";
    if (e.contains("start_check")) out << "  start   " << e["start_check"].get<std::string>() << "\n";
    for (const json& w : e["warnings"]) out << "  warning " << w.get<std::string>() << "\n";
    if (!e["patch"].empty()) out << "  patch   " << e["patch"].dump() << "\n";
  }
}

}  // namespace graintune::cli
