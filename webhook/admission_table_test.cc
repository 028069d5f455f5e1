// The admission table: 35 manifests (Pods, Jobs, JobSets; argv, bash -c and sh -c scripts,
// env, ConfigMap YAML, annotation-only, eval twins, init containers, values that must stay,
// excluded namespaces, bad annotations) through the whole Admitter, each compared with its exact
// expected JSONPatch (testdata/admission_table.expected.json). Only the free-text reason is
// redacted from the comparison. Every expected patch was reviewed by hand when recorded; to
// re-record after a deliberate change: GRAINTUNE_UPDATE_GOLDEN=1 build/webhook/admission_test
// --gtest_filter='AdmissionTable*' and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "kube/base64.h"
#include "webhook/admission.h"
#include "workload/in_memory_sources.h"
#include "workload/pod_templates.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

json ReadJson(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str(), nullptr, false);
}

const json& Table() {
  static const json table = ReadJson(std::string(GRAINTUNE_WEBHOOK_TESTDATA) + "/admission_table.json");
  return table;
}

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  if (Table().is_object())
    for (const json& c : Table()["cases"]) names.push_back(c["name"]);
  return names;
}

// The reason is prose; everything else in a patch is compared exactly.
void Redact(json& value) {
  if (value.is_object()) {
    for (auto& [k, v] : value.items()) {
      if (k == "graintune.dev/reason") v = "<reason>";
      else Redact(v);
    }
  } else if (value.is_array()) {
    for (json& v : value) Redact(v);
  }
}

// The table's case of that name, or nullptr.
const json* Case(const std::string& name) {
  for (const json& c : Table()["cases"])
    if (c["name"] == name) return &c;
  return nullptr;
}

// What every case is planned against: the machine-type table, no history, the table's
// ConfigMaps, the built-in policy.
struct TableSources {
  workload::MachineTypeTableShapes shapes;
  workload::InMemoryHistory history;
  workload::InMemoryConfigMaps configmaps;
  workload::FixedPolicy policies;
  TableSources() {
    for (const json& cm : Table()["configmaps"])
      configmaps.Put(cm["namespace"], cm["name"], cm["key"], cm["data"]);
  }
  PlannerSources Planner() { return PlannerSources{shapes, history, configmaps, policies}; }
};

json Outcome(const json& c) {
  TableSources sources;
  AdmitterOptions options;
  options.exporter = ExporterInjection{};
  Admitter admitter(sources.Planner(), options);
  const json& object = c["object"];
  const std::string kind = object["kind"];
  const std::string api = object["apiVersion"];
  const std::string group = workload::GroupOf(api);
  json review = {{"apiVersion", "admission.k8s.io/v1"},
                 {"kind", "AdmissionReview"},
                 {"request",
                  {{"uid", "table-" + c["name"].get<std::string>()},
                   {"kind", {{"group", group},
                             {"version", group.empty() ? api : api.substr(group.size() + 1)},
                             {"kind", kind}}},
                   {"operation", "CREATE"},
                   {"namespace", c["namespace"]},
                   {"object", object}}}};
  AdmissionResult r = admitter.Admit(review.dump());
  json out = json::parse(r.body);
  json patch = json::array();
  if (out["response"].contains("patch"))
    patch = json::parse(*kube::Base64Decode(out["response"]["patch"].get<std::string>(), "patch"));
  Redact(patch);
  for (json& op : patch) {
    const std::string path = op.value("path", "");
    if (path.size() >= 21 && path.substr(path.size() - 21) == "graintune.dev~1reason") op["value"] = "<reason>";
  }
  json o = {{"outcome", r.outcome}, {"allowed", out["response"].value("allowed", false)}, {"patch", patch}};
  // Applying the patch must give a valid object with the -1s gone where graintune acted.
  if (!patch.empty()) o["applies"] = !object.patch(patch).is_null();
  return o;
}

class AdmissionTable : public ::testing::TestWithParam<std::string> {};

TEST_P(AdmissionTable, PatchIsExactlyAsRecorded) {
  ASSERT_TRUE(Table().is_object()) << "cannot read " << GRAINTUNE_WEBHOOK_TESTDATA;
  const std::string golden_path = std::string(GRAINTUNE_WEBHOOK_TESTDATA) + "/admission_table.expected.json";
  json golden = ReadJson(golden_path);
  if (golden.is_discarded()) golden = json::object();
  const json* c = Case(GetParam());
  ASSERT_NE(c, nullptr);
  const json actual = Outcome(*c);
  if (const char* update = std::getenv("GRAINTUNE_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    golden[GetParam()] = actual;
    std::ofstream(golden_path) << golden.dump(1) << "\n";
    GTEST_SKIP() << "recorded";
  }
  ASSERT_TRUE(golden.contains(GetParam())) << "no recorded patch for " << GetParam();
  EXPECT_EQ(actual, golden[GetParam()]) << "actual:\n" << actual.dump(1);
  EXPECT_TRUE(actual["allowed"].get<bool>());  // fail open, always
}

// The planner's contract with ScopedPatch: nothing outside the subtrees it reports as touched
// changes. If a new mutation forgot to report its subtree, its patch would silently lack it;
// here it would differ from the full diff. With and without the exporter sidecar.
TEST_P(AdmissionTable, PlannerPatchEqualsTheFullDiff) {
  const json* c = Case(GetParam());
  ASSERT_NE(c, nullptr);
  TableSources sources;
  const json& object = (*c)["object"];
  const workload::WorkloadKind kind = workload::KindOf(workload::GroupOf(object["apiVersion"]), object["kind"]);
  const ExporterInjection exporter;
  for (const ExporterInjection* with : {static_cast<const ExporterInjection*>(nullptr), &exporter}) {
    const Plan plan = PlanWorkerCount(object, kind, (*c)["namespace"], sources.Planner(), with);
    EXPECT_EQ(plan.patch, json::diff(object, plan.mutated)) << (with ? "with" : "without") << " exporter";
    EXPECT_EQ(plan.changed, plan.mutated != object);
  }
}

INSTANTIATE_TEST_SUITE_P(Manifests, AdmissionTable, ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace graintune::webhook
