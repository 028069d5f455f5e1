// libFuzzer target: AdmissionReview bytes through the Admitter, wired as graintune-webhook wires
// it (exporter injection on) over in-memory sources rich enough for the deep paths to run: TPU
// host shapes from the machine-type table, MaxText YAML in ConfigMaps (one good, one that does
// not parse), tuning histories with trials and a recommendation, a learned dataset profile, a
// Job whose pods failed (retries are later attempts) and a policy picked by a label.
//
// Crashes and sanitizer reports are findings, and so is any answer outside admission.h's
// contract (the check traps, so libFuzzer keeps the input):
//   - the status is 200 or 400 and the body is JSON;
//   - a 400 is {"error": "..."} with outcome rejected_request;
//   - a 200 is an admission.k8s.io/v1 AdmissionReview that allows, under a non-empty uid, with
//     one of the documented outcomes;
//   - there is a patch exactly when the outcome is "mutated": the base64 of a JSON array that
//     applies to request.object and is what nlohmann's diff gives for the result
//     (scoped_patch.h promises exactly diff's operations, in diff's order);
//   - the patched object, admitted again (the API server's reinvocation), changes no further;
//   - no "internal error": the planner's catch is a net for exceptions that escape by mistake,
//     so an input that reaches it is a bug the net hid.
// Deep and huge bodies come from fuzz/make_huge_seeds.py at fuzz time (scripts/fuzz.sh).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "kube/base64.h"
#include "webhook/admission.h"
#include "workload/in_memory_sources.h"

namespace graintune::fuzz {
namespace {

using json = nlohmann::json;

// Policies by an object label, so the fuzzer can reach every mode from the body alone.
class PolicyByLabel : public workload::PolicySource {
 public:
  Policy PolicyFor(const std::string&, const std::map<std::string, std::string>& labels) override {
    Policy policy;
    auto it = labels.find("fuzz-policy");
    if (it == labels.end()) return policy;
    if (it->second == "Initial") policy.mode = Mode::kInitial;
    if (it->second == "Off") policy.mode = Mode::kOff;
    if (it->second == "FewestWorkers") policy.objective = Objective::kFewestWorkers;
    if (it->second == "TuneUnset") policy.tune_unset = true;
    if (it->second == "Narrow") {
      policy.min_workers = 3;
      policy.max_workers = 5;
      policy.reserved_cpu_cores = 170;
    }
    return policy;
  }
};

// Job "llama" in "default" has had two pods fail.
class FailedPodsOfJob : public workload::JobStatusSource {
 public:
  std::optional<int> FailedPods(const std::string& ns, const std::string& job) override {
    if (ns == "default" && job == "llama") return 2;
    return std::nullopt;
  }
};

Trial MeasuredTrial(int attempt, int workers, double step_seconds, bool oom = false) {
  Trial t;
  t.attempt = attempt;
  t.workers = workers;
  t.step_seconds_mean = t.step_seconds_p50 = step_seconds;
  t.step_seconds_p90 = step_seconds * 1.1;
  t.tokens_per_second_per_host = 27000;
  t.samples = 40;
  t.stall_fraction = workers < 4 ? 0.3 : 0.01;
  t.oom_killed = oom;
  t.worker_busy_fraction = 0.9;
  t.worker_memory_bytes = 2e9;
  return t;
}

struct Sources {
  workload::MachineTypeTableShapes shapes;
  workload::InMemoryHistory history;
  workload::InMemoryConfigMaps configmaps;
  PolicyByLabel policies;
  FailedPodsOfJob jobs;

  Sources() {
    TuningHistory llama;
    llama.trials = {MeasuredTrial(0, 4, 2.9), MeasuredTrial(1, 6, 2.4)};
    llama.recommended_workers = 7;
    llama.recommendation_attempt = 2;
    llama.ended_attempts = {0};
    for (const char* key : {"llama3-8b-v6e-32", "llama", "p1"}) history.Put("default", key, llama);
    history.Put("team-a", "llama3-8b-v6e-32", llama);
    TuningHistory initial;
    initial.mode = "Initial";
    initial.trials = {MeasuredTrial(0, 3, 3.5, /*oom=*/true)};
    for (const char* key : {"gemma2-9b-v5e", "p2"}) history.Put("default", key, initial);
    history.Put("team-a", "j1", initial);
    // Learned figures for c4-en-raw on v6e hosts, in "default" only: other namespaces do not
    // see them unless a policy shares them.
    history.PutGrainTuning(nlohmann::json::parse(R"({
      "metadata": {"namespace": "default", "name": "c4-learner"},
      "spec": {"tuningKey": "c4-learner", "dataset": "c4-en-raw", "datasetKind": "raw-text"},
      "status": {"learnedTokensPerSecondPerWorker": 8000,
                 "learned": {"machineType": "ct6e-standard-4t", "workerMemoryBytes": 1.5e9},
                 "recommendation": {"decidedAt": "2026-11-30T06:00:00Z"}}})"));

    const std::string maxtext =
        "base_config: base.yml\nmodel_name: gemma2-9b\nper_device_batch_size: 4\n"
        "max_target_length: 4096\ndataset_type: grain\ngrain_worker_count: -1\n"
        "grain_worker_count_eval: -1\n";
    configmaps.Put("default", "maxtext-gemma2-9b", "config.yml", maxtext);
    configmaps.Put("team-a", "maxtext-cfg", "maxtext.yml",
                   "model_name: llama2-7b\nper_device_batch_size: 4\nmax_target_length: 4096\n"
                   "grain_worker_count: -1\ngrain_worker_count_eval: -1\n");
    configmaps.Put("default", "maxtext-broken", "config.yml", "grain_worker_count: [-1\n  - {");
    configmaps.Put("default", "maxtext-set", "config.yml",
                   "grain_worker_count: 3\nmetrics_file: /tmp/metrics.txt\n");
  }
};

webhook::Admitter& TheAdmitter() {
  static Sources* sources = new Sources();
  static webhook::Admitter* admitter = [] {
    webhook::AdmitterOptions options;
    options.exporter.emplace();
    // The binary's value and site budgets, but no wall-clock one: an answer must not depend on
    // how fast this machine runs under the sanitizers. Slowness is libFuzzer's -timeout.
    options.limits.max_time = std::chrono::hours(1);
    return new webhook::Admitter(webhook::PlannerSources{sources->shapes, sources->history,
                                                         sources->configmaps, sources->policies,
                                                         &sources->jobs},
                                 options);
  }();
  return *admitter;
}

void Check(bool ok) {
  if (!ok) __builtin_trap();
}

// The answer's JSON (checked against the contract), or discarded for a 400.
json CheckedAnswer(const webhook::AdmissionResult& r) {
  Check(r.http_status == 200 || r.http_status == 400);
  json body = json::parse(r.body, nullptr, /*allow_exceptions=*/false);
  Check(!body.is_discarded() && body.is_object());
  if (r.http_status == 400) {
    Check(r.outcome == "rejected_request");
    Check(body.size() == 1 && body.contains("error") && body["error"].is_string());
    return json(json::value_t::discarded);
  }
  Check(r.outcome == "mutated" || r.outcome == "unchanged" || r.outcome == "failed_open" ||
        (r.outcome == "over_budget" && !r.over_budget.empty()));
  Check(body.value("apiVersion", "") == "admission.k8s.io/v1");
  Check(body.value("kind", "") == "AdmissionReview");
  Check(body.contains("response") && body["response"].is_object());
  const json& response = body["response"];
  Check(response.contains("allowed") && response["allowed"] == true);
  Check(response.contains("uid") && response["uid"].is_string() &&
        !response["uid"].get<std::string>().empty());
  Check(response.contains("patch") == (r.outcome == "mutated"));
  if (response.contains("warnings")) {
    Check(response["warnings"].is_array());
    for (const json& w : response["warnings"]) {
      Check(w.is_string());
      // Admit's catch-all writes this prefix; warnings that quote the object start otherwise.
      Check(w.get<std::string>().rfind("graintune: internal error (", 0) != 0);
    }
  }
  return body;
}

// The decoded JSON patch of a mutated answer.
json PatchOf(const json& answer) {
  const json& response = answer["response"];
  Check(response.value("patchType", "") == "JSONPatch");
  Check(response["patch"].is_string());
  Result<std::string> bytes = kube::Base64Decode(response["patch"].get<std::string>(), "patch");
  Check(bytes.ok());
  json patch = json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  Check(!patch.is_discarded() && patch.is_array() && !patch.empty());
  return patch;
}

// `object` with `patch` applied; traps when the patch does not apply.
json Patched(const json& object, const json& patch) {
  try {
    return object.patch(patch);
  } catch (const json::exception&) {
    Check(false);
  }
  return json();
}

}  // namespace
}  // namespace graintune::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graintune::fuzz;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const graintune::webhook::AdmissionResult r = TheAdmitter().Admit(body);
  const json answer = CheckedAnswer(r);
  if (r.outcome != "mutated") return 0;

  // A mutated answer came from the full path, so the body is a JSON object under the depth
  // limit with an object at request.object.
  json review = json::parse(body, nullptr, /*allow_exceptions=*/false);
  Check(review.is_object() && review["request"]["object"].is_object());
  const json& object = review["request"]["object"];
  const json patch = PatchOf(answer);
  json patched = Patched(object, patch);
  Check(json::diff(object, patched) == patch);

  // Reinvocation: the object as the API server stores it, admitted again, stays as it is
  // (unless the patch took it past the API server's own body limit).
  review["request"]["object"] = std::move(patched);
  const std::string again_body = review.dump();
  if (again_body.size() > graintune::webhook::AdmitterOptions{}.max_body_bytes) return 0;
  const graintune::webhook::AdmissionResult again = TheAdmitter().Admit(again_body);
  CheckedAnswer(again);
  Check(again.http_status == 200 && again.outcome != "mutated");
  return 0;
}
