// graintune explain: what the webhook would do to every object of some manifests.
//
// Runs the webhook's own planner, with the webhook's defaults, on each Pod, Job and JobSet of
// one or more (multi-document) manifests or stdin: ConfigMaps and GrainTunePolicies are taken
// from the same input (and --policy files); without any policy, the Helm chart's default
// GrainTunePolicy applies, as on a freshly installed cluster. Host shapes come from the
// built-in machine-type table (or --machine-type); tuned Jobs and Pods get the exporter
// sidecar as the webhook adds it (--no-exporter as the webhook's flag). Prints per object
// what it made of it (tuned, deferred, recommend only, ...), each -1 found, the value, the
// reason, the warnings and the JSONPatch the webhook would return, and what it read of the run:
// whether a resume restores Grain's iterator (the run keeps its value), its checkpoint directory,
// and under a policy's spec.lap whether a practice lap runs first and what it costs.
// GrainTunings in the input are the history the webhook would read (their trials, runs and
// recommendations, and their learned figures, within the namespaces learning spans); --attempt N also explains the pods of attempt N (a JobSet restart's, a Job
// retry's) as the webhook would create them.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/default_policy.h"
#include "cli/explain_text.h"
#include "cli/tuning_flags.h"
#include "tuner/figures.h"
#include "tuner/machine_types.h"
#include "webhook/exporter_flags.h"
#include "webhook/worker_count_planner.h"
#include "workload/grain_tuning_status.h"
#include "workload/graintune_objects.h"
#include "workload/in_memory_sources.h"
#include "workload/pod_templates.h"
#include "workload/run_resume.h"
#include "workload/workload_annotations.h"
#include "workload/yaml_json.h"

namespace graintune::cli {

using nlohmann::json;
using webhook::ExporterInjection;
using webhook::Finding;
using webhook::Plan;
using webhook::PlanOutcome;
using webhook::PlannerSources;
using webhook::PlanWorkerCount;
using workload::FixedShape;
using workload::InMemoryConfigMaps;
using workload::InMemoryHistory;
using workload::MachineTypeTableShapes;
using workload::NodeShapeSource;
using workload::ParseYamlDocuments;
using workload::StaticPolicies;
using workload::WorkloadKind;

const CommandSpec& ExplainSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec spec;
    spec.name = "explain";
    spec.summary = "What the webhook would do to every Pod, Job and JobSet of some manifests.";
    spec.usage = "[-f] FILE... | - [flags]";
    spec.description =
        "Runs the webhook's planner on each object, as the webhook would with its defaults:\n"
        "ConfigMaps and GrainTunePolicies come from the same manifests (and --policy files);\n"
        "with no policy at all, the Helm chart's default GrainTunePolicy applies (maxWorkers 64).\n"
        "Hosts come from the built-in GKE TPU machine-type table, or --machine-type. Tuned Jobs\n"
        "and Pods get the graintune-exporter sidecar as the webhook adds it. '-' reads stdin.";
    spec.flags = {
        {"filename", 'f', "FILE", "", "a manifest to explain (repeatable; '-' for stdin)"},
        {"policy", 0, "FILE", "the chart's default GrainTunePolicy",
         "GrainTunePolicies to apply (repeatable)"},
        {"machine-type", 0, "TYPE", "from each workload's node selector",
         "assume every host is of this machine type or slice (v6e-32)"},
        {"attempt", 0, "N", "",
         "also explain the pods of attempt N of each Job and JobSet (a restart: JobSet's "
         "restart-attempt label, a Job's retry), with the GrainTunings in the input as history"},
    };
    // The webhook's own exporter flags, so that explain adds the sidecar the webhook adds.
    spec.flags.insert(spec.flags.end() - 1, webhook::ExporterFlagSpecs().begin(),
                      webhook::ExporterFlagSpecs().end());
    spec.max_positionals = 1000;
    spec.examples =
        "  graintune explain examples/llama3-8b-v6e-32-jobset.yaml\n"
        "  kubectl get jobset my-run -o yaml | graintune explain - -o json\n"
        "  graintune explain -f job.yaml --policy examples/policies.yaml --machine-type v6e-32\n"
        "  kubectl get jobset,graintuning -o yaml | graintune explain - --attempt 2\n";
    return spec;
  }();
  return kSpec;
}

namespace {

struct Input {
  std::string name;  // the file, or "stdin"
  std::vector<json> documents;
};

Result<Input> ReadInput(const std::string& path, std::istream& in) {
  std::stringstream text;
  if (path == "-") {
    text << in.rdbuf();
  } else {
    std::ifstream file(path);
    if (!file) return Status::Error("cannot read " + path);
    text << file.rdbuf();
  }
  Result<std::vector<json>> docs = ParseYamlDocuments(text.str());
  const std::string name = path == "-" ? "stdin" : path;
  if (!docs.ok()) return Status::Error(name + ": " + docs.error());
  return Input{name, std::move(*docs)};
}

// The child Jobs the JobSet controller makes from a (mutated) JobSet for restart `attempt`: the
// first replicatedJob's, labelled as JobSet labels them.
std::vector<json> AttemptJobs(const json& jobset, int attempt) {
  std::vector<json> jobs;
  const json meta = jobset.value("metadata", json::object());
  const json replicated = jobset.value("spec", json::object()).value("replicatedJobs", json::array());
  if (!replicated.is_array() || replicated.empty() || !replicated[0].is_object()) return jobs;
  const json& r = replicated[0];
  json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"},
              {"metadata", r.value("template", json::object()).value("metadata", json::object())},
              {"spec", r.value("template", json::object()).value("spec", json::object())}};
  job["metadata"]["name"] = meta.value("name", "") + "-" + r.value("name", "") + "-0";
  job["metadata"]["namespace"] = meta.value("namespace", "default");
  job["metadata"]["labels"][workload::kJobSetNameLabel] = meta.value("name", "");
  job["metadata"]["labels"][workload::kRestartAttemptLabel] = std::to_string(attempt);
  job["spec"]["template"]["metadata"]["labels"][workload::kRestartAttemptLabel] = std::to_string(attempt);
  jobs.push_back(std::move(job));
  return jobs;
}

// A pod of attempt `attempt` made from a (mutated) Job's template: a JobSet's carries the
// JobSet's labels; a plain Job's retry is numbered by graintune's attempt annotation.
json AttemptPod(const json& job, const std::string& owner, bool of_jobset, int attempt) {
  const json tmpl = job.value("spec", json::object()).value("template", json::object());
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", tmpl.value("metadata", json::object())},
              {"spec", tmpl.value("spec", json::object())}};
  pod["metadata"]["namespace"] = job.value("metadata", json::object()).value("namespace", "default");
  if (of_jobset) {
    pod["metadata"]["labels"][workload::kJobSetNameLabel] = owner;
    pod["metadata"]["labels"][workload::kRestartAttemptLabel] = std::to_string(attempt);
  } else {
    pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] = owner;
    pod["metadata"]["annotations"][workload::kAttemptAnnotation] = std::to_string(attempt);
  }
  return pod;
}

// The manifests named on the command line (FILE... and -f), read in order.
Result<std::vector<Input>> ReadInputs(const CommandLine& line, std::istream& in) {
  std::vector<std::string> paths = line.positionals;
  for (const std::string& f : line.flags.All("filename")) paths.push_back(f);
  if (paths.empty())
    return Status::Error("no manifest given: FILE, -f FILE, or - for stdin\nSee 'graintune explain --help'.");
  if (std::count(paths.begin(), paths.end(), "-") > 1) return Status::Error("stdin ('-') given twice");
  std::vector<Input> inputs;
  for (const std::string& path : paths) {
    Result<Input> input = ReadInput(path, in);
    if (!input.ok()) return input.status();
    inputs.push_back(std::move(*input));
  }
  return inputs;
}

// What the webhook would read from the cluster, taken from the inputs and the flags instead.
struct ExplainSources {
  std::unique_ptr<NodeShapeSource> shapes = std::make_unique<MachineTypeTableShapes>();
  InMemoryHistory history;
  InMemoryConfigMaps configmaps;
  std::optional<StaticPolicies> policies;
  std::optional<ExporterInjection> exporter;
};

// The GrainTunePolicies of --policy files.
Status ReadPolicyFiles(const server::Flags& flags, std::istream& in, std::vector<json>& policy_objects) {
  for (const std::string& path : flags.All("policy")) {
    Result<Input> input = ReadInput(path, in);
    if (!input.ok()) return Status::Error("--policy " + input.error());
    size_t policies = 0;
    for (json& doc : input->documents) {
      if (doc.is_object() && doc.value("kind", "") == "GrainTunePolicy") {
        policy_objects.push_back(std::move(doc));
        ++policies;
      }
    }
    if (policies == 0) return Status::Error("--policy " + input->name + ": no GrainTunePolicy in it");
  }
  return Status::Ok();
}

// The GrainTunings (history), ConfigMaps and GrainTunePolicies among the inputs.
void ReadClusterObjects(const std::vector<Input>& inputs, ExplainSources& sources,
                        std::vector<json>& policy_objects) {
  for (const Input& input : inputs) {
    for (const json& doc : input.documents) {
      if (!doc.is_object()) continue;
      const std::string kind = doc.value("kind", "");
      const json meta = doc.value("metadata", json::object());
      if (kind == "GrainTunePolicy") policy_objects.push_back(doc);
      if (kind == "GrainTuning") {
        if (const std::string key = workload::SpecOf(doc).tuning_key; !key.empty())
          sources.history.Put(meta.value("namespace", "default"), key, workload::HistoryFromGrainTuning(doc));
        sources.history.PutGrainTuning(doc);
      }
      if (kind != "ConfigMap") continue;
      const json data = doc.value("data", json::object());
      for (const auto& [key, value] : data.items()) {
        if (value.is_string())
          sources.configmaps.Put(meta.value("namespace", "default"), meta.value("name", ""), key,
                                 value.get<std::string>());
      }
    }
  }
}

Status LoadSources(const server::Flags& flags, const std::vector<Input>& inputs, std::istream& in,
                   ExplainSources& sources) {
  if (std::optional<std::string> type = flags.Get("machine-type")) {
    Result<MachineType> found = MachineTypeOrSlice(*type, nullptr);
    if (!found.ok()) return found.status();
    sources.shapes = std::make_unique<FixedShape>(HostShapeOf(*found));
  }
  std::vector<json> policy_objects;
  if (Status s = ReadPolicyFiles(flags, in, policy_objects); !s.ok()) return s;
  ReadClusterObjects(inputs, sources, policy_objects);
  if (policy_objects.empty()) policy_objects.push_back(ChartDefaultPolicyObject());
  Result<StaticPolicies> policies = StaticPolicies::FromObjects(policy_objects);
  if (!policies.ok()) return policies.status();
  sources.policies = std::move(*policies);
  Result<std::optional<ExporterInjection>> exporter = webhook::ExporterFromFlags(flags);
  if (!exporter.ok()) return exporter.status();
  sources.exporter = *exporter;
  return Status::Ok();
}

// One report entry: what the planner made of an object.
json EntryOf(const Plan& plan, const std::string& object, const std::string& file,
             const Policy& policy, const std::string& ns) {
  json entry = {{"object", object},
                {"file", file},
                {"outcome", ToString(plan.outcome)},
                {"policy", policy.name},
                {"workers", plan.workers},
                {"reason", plan.reason},
                {"warnings", plan.warnings},
                {"patch", plan.patch}};
  if (plan.eval_workers > 0) entry["eval_workers"] = plan.eval_workers;
  if (!plan.lap.empty()) entry["lap"] = plan.lap;  // the policy's spec.lap: what runs, or why not
  if (!plan.start_check.empty()) entry["start_check"] = plan.start_check;  // spec.startCheck: who, or why not
  if (!plan.host.machine_type.empty() || plan.host.cpu_cores > 0) {
    entry["host"] = {{"source", plan.host.source}, {"cpu_cores", plan.host.cpu_cores},
                     {"memory_bytes", plan.host.memory_bytes},
                     {"tpu_chips", plan.host.tpu_chips}};
    entry["demand_key"] = plan.demand_key;
    entry["learned_from"] = plan.learned_from;
    entry["learning_spans"] = policy.learn_from.Describe(ns);
    entry["resume"] = workload::ToJson(plan.resume);
  }
  json found = json::array();
  for (const Finding& f : plan.findings) {
    found.push_back({{"container", f.container}, {"where", f.site}, {"key", f.key},
                     {"pointer", f.pointer}, {"before", f.before}, {"value", f.value},
                     {"resume", workload::ToJson(f.resume)}});
    if (!f.left.empty()) found.back()["left"] = f.left;  // value -1: graintune wrote nothing
    if (f.start_fill) found.back()["start_fill"] = *f.start_fill;  // what the start check starts it with
  }
  entry["found"] = found;
  return entry;
}

// Plans one object as the webhook would and appends its entry to `report`; returns the plan.
// `label` names the object in the report when it is not its own name (an attempt's pod).
Plan ExplainObject(const json& doc, WorkloadKind kind, const std::string& file, const std::string& label,
                   ExplainSources& sources, json& report) {
  const json meta = doc.value("metadata", json::object());
  const std::string ns = meta.value("namespace", "default");
  const Policy policy = sources.policies->PolicyFor(ns, workload::StringMap(meta, "labels"));
  Plan plan = PlanWorkerCount(doc, kind, ns,
                              PlannerSources{*sources.shapes, sources.history, sources.configmaps,
                                             *sources.policies},
                              sources.exporter ? &*sources.exporter : nullptr);
  const std::string name = label.empty() ? meta.value("name", "") : label;
  report.push_back(EntryOf(plan, ToString(kind) + " " + ns + "/" + name, file, policy, ns));
  return plan;
}

// Each workload of the inputs, and with `attempt` the pods of that attempt: a JobSet's child
// Job for that restart, then its pod; a Job's retry pod.
json ExplainInputs(const std::vector<Input>& inputs, std::optional<int> attempt, ExplainSources& sources) {
  json report = json::array();
  for (const Input& input : inputs) {
    for (const json& doc : input.documents) {
      if (!doc.is_object()) continue;
      const WorkloadKind kind =
          workload::KindOf(workload::GroupOf(doc.value("apiVersion", "")), doc.value("kind", ""));
      if (kind == WorkloadKind::kOther) continue;
      const Plan plan = ExplainObject(doc, kind, input.name, "", sources, report);
      if (!attempt || kind == WorkloadKind::kPod) continue;
      const std::string name = doc.value("metadata", json::object()).value("name", "");
      const std::string suffix = " (attempt " + std::to_string(*attempt) + ")";
      json job = plan.mutated;
      if (kind == WorkloadKind::kJobSet)
        for (const json& child : AttemptJobs(plan.mutated, *attempt))
          job = ExplainObject(child, WorkloadKind::kJob, input.name,
                              child["metadata"]["name"].get<std::string>() + suffix, sources, report)
                    .mutated;
      ExplainObject(AttemptPod(job, name, kind == WorkloadKind::kJobSet, *attempt), WorkloadKind::kPod,
                    input.name, name + "-pod" + suffix, sources, report);
    }
  }
  return report;
}

}  // namespace

int RunExplain(const Args& args, std::istream& in, std::ostream& out, std::ostream& err) {
  const Result<CommandLine> line = ParseCommandLine(ExplainSpec(), args);
  if (std::optional<int> code = HelpOrUsageError(ExplainSpec(), line, out, err)) return *code;
  const auto fail = [&](const std::string& message) {
    err << "graintune explain: " << message << "\n";
    return 2;
  };
  const Result<std::vector<Input>> inputs = ReadInputs(*line, in);
  if (!inputs.ok()) return fail(inputs.error());
  ExplainSources sources;
  if (Status s = LoadSources(line->flags, *inputs, in, sources); !s.ok()) return fail(s.message());
  Result<std::optional<int>> attempt = line->flags.IntegerIn("attempt", 0, 1000000);
  if (!attempt.ok()) return fail(attempt.error());

  const json report = ExplainInputs(*inputs, *attempt, sources);
  if (line->output != OutputFormat::kText) {
    WriteStructured(report, line->output, out);
    return 0;
  }
  if (report.empty()) out << "no Pod, Job or JobSet in the manifests given\n";
  PrintExplainText(report, out);
  return 0;
}

}  // namespace graintune::cli
