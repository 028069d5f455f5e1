// graintune explain FILE.yaml: what the webhook would do to every object of a manifest.
//
// Runs the webhook's own planner on each Pod, Job and JobSet of a (multi-document) manifest,
// with ConfigMaps taken from the same file and host shapes from the built-in machine-type
// table (or --machine-type), and prints per -1 found: object, container, where, the value
// chosen, the reason, and the JSONPatch the webhook would return.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "server/flags.h"
#include "workload/yaml_json.h"
#include "tuner/figures.h"
#include "tuner/machine_types.h"
#include "workload/in_memory_sources.h"
#include "webhook/worker_count_planner.h"

namespace graintune::cli {

using nlohmann::json;
using webhook::Finding;
using webhook::Plan;
using webhook::PlannerSources;
using webhook::PlanWorkerCount;
using workload::FixedPolicy;
using workload::FixedShape;
using workload::InMemoryConfigMaps;
using workload::InMemoryHistory;
using workload::MachineTypeTableShapes;
using workload::NodeShapeSource;
using workload::ParseYamlDocuments;
using workload::WorkloadKind;

int RunExplain(const Args& args, std::ostream& out, std::ostream& err) {
  Result<server::Flags> flags = server::Flags::Parse(args, {"machine-type", "output"});
  if (!flags.ok() || flags->positional().size() != 1) {
    err << "graintune explain: " << (flags.ok() ? "usage: graintune explain FILE.yaml "
                                                  "[--machine-type T] [--output json]"
                                                : flags.error())
        << "\n";
    return 2;
  }
  const std::string path = flags->positional()[0];
  std::ifstream file(path);
  if (!file) {
    err << "graintune explain: cannot read " << path << "\n";
    return 2;
  }
  std::stringstream text;
  text << file.rdbuf();
  Result<std::vector<json>> docs = ParseYamlDocuments(text.str());
  if (!docs.ok()) {
    err << "graintune explain: " << path << ": " << docs.error() << "\n";
    return 2;
  }

  std::unique_ptr<NodeShapeSource> shapes = std::make_unique<MachineTypeTableShapes>();
  if (std::optional<std::string> type = flags->Get("machine-type")) {
    std::optional<MachineType> found = FindMachineType(*type);
    if (!found) {
      err << "graintune explain: unknown machine type '" << *type << "'\n";
      return 2;
    }
    shapes = std::make_unique<FixedShape>(HostShapeOf(*found));
  }
  InMemoryHistory history;
  InMemoryConfigMaps configmaps;
  FixedPolicy policies;
  for (const json& doc : *docs) {
    if (!doc.is_object() || doc.value("kind", "") != "ConfigMap") continue;
    const json meta = doc.value("metadata", json::object());
    const json data = doc.value("data", json::object());
    for (const auto& [key, value] : data.items()) {
      if (value.is_string())
        configmaps.Put(meta.value("namespace", "default"), meta.value("name", ""), key,
                       value.get<std::string>());
    }
  }

  json report = json::array();
  for (const json& doc : *docs) {
    if (!doc.is_object()) continue;
    const WorkloadKind kind = workload::KindOf(workload::GroupOf(doc.value("apiVersion", "")), doc.value("kind", ""));
    if (kind == WorkloadKind::kOther) continue;
    const std::string ns = doc.value("metadata", json::object()).value("namespace", "default");
    const Plan plan = PlanWorkerCount(doc, kind, ns, PlannerSources{*shapes, history, configmaps, policies});
    const json& patch = plan.patch;
    json entry = {{"object", ToString(kind) + " " + ns + "/" +
                                 doc.value("metadata", json::object()).value("name", "")},
                  {"workers", plan.workers},
                  {"reason", plan.reason},
                  {"warnings", plan.warnings},
                  {"patch", patch}};
    if (!plan.host.machine_type.empty() || plan.host.cpu_cores > 0) {
      entry["host"] = {{"source", plan.host.source}, {"cpu_cores", plan.host.cpu_cores},
                       {"memory_bytes", plan.host.memory_bytes}, {"tpu_chips", plan.host.tpu_chips}};
    }
    if (plan.eval_workers > 0) entry["eval_workers"] = plan.eval_workers;
    json found = json::array();
    for (const Finding& f : plan.findings) {
      found.push_back({{"container", f.container}, {"where", f.site}, {"key", f.key},
                       {"pointer", f.pointer}, {"before", f.before}, {"value", f.value}});
    }
    entry["found"] = found;
    report.push_back(entry);
  }

  if (flags->Get("output").value_or("text") == "json") {
    out << report.dump(2) << "\n";
    return 0;
  }
  if (report.empty()) out << "no Pod, Job or JobSet in " << path << "\n";
  for (const json& e : report) {
    out << e["object"].get<std::string>() << "\n";
    if (e["found"].empty()) out << "  no grain_worker_count=-1 to tune\n";
    for (const json& f : e["found"]) {
      out << "  found   " << f["key"].get<std::string>() << "=" << f["before"].get<std::string>()
          << " in container " << f["container"].get<std::string>() << " ("
          << f["where"].get<std::string>() << ", " << f["pointer"].get<std::string>() << ")\n"
          << "  value   " << f["value"].get<int>() << "\n";
    }
    if (e.contains("host"))
      out << "  host    " << e["host"]["source"].get<std::string>() << ": "
          << Fixed(e["host"]["cpu_cores"].get<double>(), 1) << " cpu, "
          << Bytes(e["host"]["memory_bytes"].get<double>()) << ", "
          << e["host"]["tpu_chips"].get<int>() << " chips\n";
    if (!e["reason"].get<std::string>().empty())
      out << "  reason  " << e["reason"].get<std::string>() << "\n";
    for (const json& w : e["warnings"]) out << "  warning " << w.get<std::string>() << "\n";
    if (!e["patch"].empty()) out << "  patch   " << e["patch"].dump() << "\n";
  }
  return 0;
}

}  // namespace graintune::cli
