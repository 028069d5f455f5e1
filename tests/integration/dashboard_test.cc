// The chart's Grafana dashboard (charts/graintune/dashboards/graintune.json, rendered by
// templates/dashboard.yaml) against what graintune's binaries export: every metric and label
// its queries and variables name is in the /metrics of the running graintune-webhook and
// graintune-operator (with a GrainTuning in the cluster, so the per-trial series exist), and
// promtool, given those series, returns data for every query.
#include <gtest/gtest.h>

#include <regex>

#include "kube/client.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/integration/graintune_metrics.h"
#include "tests/integration/promql_names.h"
#include "workload/yaml_json.h"

namespace graintune::testing {
namespace {

using kube::Json;

struct Query {
  std::string where;  // "panel 'Step time by attempt' A", "variable namespace"
  std::string text;
  bool variable = false;
};

void CollectPanelQueries(const Json& panels, std::vector<Query>& out) {
  for (const Json& p : panels) {
    for (const Json& t : p.value("targets", Json::array()))
      out.push_back({"panel '" + p.value("title", "") + "' " + t.value("refId", ""), t.value("expr", "")});
    CollectPanelQueries(p.value("panels", Json::array()), out);  // a row's panels
  }
}

std::vector<Query> QueriesOf(const Json& dashboard) {
  std::vector<Query> out;
  CollectPanelQueries(dashboard.value("panels", Json::array()), out);
  for (const Json& v : dashboard["templating"].value("list", Json::array())) {
    if (v.value("type", "") != "query") continue;
    const Json q = v["query"];
    out.push_back({"variable " + v.value("name", ""), q.is_object() ? q.value("query", "") : q.get<std::string>(), true});
  }
  return out;
}

// What is wrong with one query against the exposition: metrics nothing exports, labels none of
// its metrics carry, exact label values never exported.
std::vector<std::string> Problems(const Query& q, Exposition& exported) {
  Result<PromqlNames> names = q.variable ? NamesInVariableQuery(q.text) : NamesInPromql(q.text);
  if (!names.ok()) return {q.where + ": " + names.error()};
  std::vector<std::string> problems;
  if (names->selectors.empty()) problems.push_back(q.where + " names no metric");
  for (const VectorSelector& s : names->selectors) {
    if (!exported.HasFamily(s.metric)) {
      problems.push_back(q.where + " names " + s.metric + ", which nothing exports");
      continue;
    }
    for (const LabelMatcher& m : s.matchers) {
      if (!exported.HasLabel(s.metric, m.label))
        problems.push_back(q.where + " matches label " + m.label + " of " + s.metric + ", which it never carries");
      else if (m.op == "=" && !exported.HasLabel(s.metric, m.label + "=\"" + m.value))
        problems.push_back(q.where + " matches " + m.label + "=\"" + m.value + "\", never exported on " + s.metric);
    }
  }
  for (const std::string& label : names->grouping_labels) {
    bool carried = false;
    for (const VectorSelector& s : names->selectors) carried |= exported.HasLabel(s.metric, label);
    if (!carried) problems.push_back(q.where + " groups by " + label + ", which none of its metrics carries");
  }
  return problems;
}

// Grafana's variables as the dashboard's "All" and a 5-minute rate window.
std::string WithVariablesSet(std::string text) {
  text = std::regex_replace(text, std::regex(R"(\$__rate_interval)"), "5m");
  return std::regex_replace(text, std::regex(R"(\$[a-z_]+)"), ".*");
}

TEST(Dashboard, ShippedOffByDefaultWithTheGrafanaSidecarLabel) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  const std::string chart = std::string(GRAINTUNE_SOURCE_DIR) + "/charts/graintune";
  Result<std::string> defaults = cp->Helm({"template", "gt", chart});
  ASSERT_TRUE(defaults.ok()) << defaults.error();
  EXPECT_EQ(defaults->find("grafana_dashboard"), std::string::npos);
  Result<std::string> rendered = cp->Helm({"template", "gt", chart, "-s", "templates/dashboard.yaml",
                                           "--set", "metrics.dashboard.enabled=true"});
  ASSERT_TRUE(rendered.ok()) << rendered.error();
  Result<std::vector<Json>> docs = workload::ParseYamlDocuments(*rendered);
  ASSERT_TRUE(docs.ok()) << docs.error();
  ASSERT_EQ(docs->size(), 1u);
  const Json& cm = (*docs)[0];
  EXPECT_EQ(cm["kind"], "ConfigMap");
  EXPECT_EQ(cm["metadata"]["labels"]["grafana_dashboard"], "1");
  const Json dashboard = Json::parse(cm["data"]["graintune.json"].get<std::string>());
  EXPECT_EQ(dashboard["uid"], "graintune");
  std::set<std::string> titles;
  for (const Json& p : dashboard["panels"]) titles.insert(p.value("title", ""));
  for (const char* t : {"Step time by attempt", "TFLOP/s per chip by attempt", "Grain workers by attempt",
                        "Admissions by outcome", "Admission latency"})
    EXPECT_TRUE(titles.count(t)) << t;
  // The API server takes it.
  Result<std::string> applied = cp->Kubectl({"apply", "--dry-run=server", "-f", "-"}, *rendered);
  EXPECT_TRUE(applied.ok()) << applied.error();
}

TEST(Dashboard, EveryQueryNamesWhatTheBinariesExportAndReturnsData) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  Result<std::string> text = kube::ReadFileText(std::string(GRAINTUNE_SOURCE_DIR) +
                                                "/charts/graintune/dashboards/graintune.json");
  ASSERT_TRUE(text.ok()) << text.error();
  const std::vector<Query> queries = QueriesOf(Json::parse(*text));
  ASSERT_GE(queries.size(), 8u);

  // A GrainTuning with a measured trial and a recommendation, for the operator's trial series.
  auto client = cp->AdminClient();
  Json gt = {{"apiVersion", "graintune.dev/v1alpha1"}, {"kind", "GrainTuning"},
             {"metadata", {{"name", "dashboard-test"}, {"namespace", "default"}}},
             {"spec", {{"tuningKey", "dashboard-test"}}}};
  kube::ApiResult<Json> created = client->Create(kube::resources::kGrainTunings, "default", gt);
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  (*created)["status"] = {{"phase", "Exploring"},
                          {"trials", {{{"attempt", 0}, {"workers", 4}, {"samples", 12},
                                       {"stepTimeMeanSeconds", 6.885}, {"tflopsPerDevice", 144.1},
                                       {"dataBound", true}, {"oomKilled", false}}}},
                          {"recommendation", {{"workers", 15}, {"attempt", 1}, {"reason", "test"}}}};
  kube::ApiResult<Json> updated = client->Replace(kube::resources::kGrainTunings, "default", *created, "status");
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();

  Result<Exposition> scraped = ScrapeGraintuneBinaries(
      *cp, {.webhook = GRAINTUNE_WEBHOOK_BIN, .operator_ = GRAINTUNE_OPERATOR_BIN,
            .operator_ready = "graintuning=\"dashboard-test\""});
  ASSERT_TRUE(scraped.ok()) << scraped.error();
  Exposition exported = *scraped;

  for (const Query& q : queries)
    for (const std::string& p : Problems(q, exported)) ADD_FAILURE() << p << "\n  query: " << q.text;
  // The check itself finds a misspelt metric and label.
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"graintune_trial_step_seconds", "graintune_trial_step_secs"},
                                 {"graintuning_namespace", "namespace"}, {"by (le)", "by (bucket)"}}) {
    bool caught = false;
    for (Query q : queries) {
      if (q.text.find(from) == std::string::npos) continue;
      q.text.replace(q.text.find(from), from.size(), to);
      caught |= !Problems(q, exported).empty();
    }
    EXPECT_TRUE(caught) << "a query with " << to << " instead of " << from << " passed";
  }

  // promtool evaluates every query over the exported series (counters and histograms rising,
  // gauges flat) and each returns at least one sample.
  Json series = Json::array();
  for (const auto& [name, label_sets] : exported.samples) {
    const std::string type = exported.types[exported.FamilyOf(name)];
    for (const std::string& labels : label_sets)
      series.push_back({{"series", name + "{" + labels + "}"},
                        {"values", type == "gauge" ? "1x40" : "0+1x40"}});
  }
  Json tests = Json::array();
  for (const Query& q : queries) {
    if (q.variable) continue;
    tests.push_back({{"name", q.where},
                     {"interval", "1m"},
                     {"input_series", series},
                     {"promql_expr_test", {{{"expr", "count(" + WithVariablesSet(q.text) + ") > bool 0"},
                                            {"eval_time", "30m"},
                                            {"exp_samples", {{{"labels", "{}"}, {"value", 1}}}}}}}});
  }
  const std::string rules_file = cp->dir() + "/dashboard-no-rules.json";
  ASSERT_TRUE(WriteFile(rules_file, R"({"groups": []})").ok());
  const std::string tests_file = cp->dir() + "/dashboard-queries-test.json";
  ASSERT_TRUE(WriteFile(tests_file, Json{{"rule_files", {rules_file}}, {"evaluation_interval", "1m"},
                                         {"tests", tests}}.dump(2)).ok());
  Result<std::string> tested = RunShell("promtool test rules '" + tests_file + "' 2>&1", "promtool test rules");
  ASSERT_TRUE(tested.ok()) << tested.error();
  EXPECT_NE(tested->find("SUCCESS"), std::string::npos) << *tested;
}

}  // namespace
}  // namespace graintune::testing
