// The chart's alerting rules (charts/graintune/templates/_alerts.tpl) against what they watch:
// every metric and label value they name is one the running graintune-webhook and
// graintune-operator export, promtool accepts the rules, and each alert fires on the failure it
// describes and stays quiet on a healthy series (`promtool test rules`).
#include <gtest/gtest.h>

#include <map>
#include <regex>

#include "kube/config.h"
#include "tests/controlplane/child_process.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/integration/graintune_metrics.h"
#include "workload/yaml_json.h"

namespace graintune::testing {
namespace {

using kube::Json;

Result<std::string> Promtool(const std::vector<std::string>& args) {
  std::string cmd = "promtool";
  for (const std::string& a : args) cmd += " '" + a + "'";
  return RunShell(cmd + " 2>&1", "promtool " + args.front());
}

// One promtool test group: these series (1-minute samples for 40 minutes), and whether `rule`
// fires at 30 minutes. The expected labels and annotations are the rule's own: every alert
// here aggregates its series away.
Json Case(const std::string& name, const std::vector<std::pair<std::string, std::string>>& series,
          const Json& rule, bool fires) {
  Json input = Json::array();
  for (const auto& [s, values] : series) input.push_back({{"series", s}, {"values", values}});
  Json expected = Json::array();
  if (fires)
    expected.push_back({{"exp_labels", rule.value("labels", Json::object())},
                        {"exp_annotations", rule.value("annotations", Json::object())}});
  return {{"name", name},
          {"interval", "1m"},
          {"input_series", input},
          {"alert_rule_test", {{{"eval_time", "30m"}, {"alertname", rule["alert"]}, {"exp_alerts", expected}}}}};
}

TEST(AlertRules, NameOnlyExportedMetricsAndFireOnTheFailuresTheyDescribe) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  // The rules as the chart renders them.
  Result<std::string> rendered =
      cp->Helm({"template", "gt", std::string(GRAINTUNE_SOURCE_DIR) + "/charts/graintune", "-s",
                "templates/alerts.yaml", "--set", "metrics.prometheusRule.enabled=true"});
  ASSERT_TRUE(rendered.ok()) << rendered.error();
  Result<std::vector<Json>> docs = workload::ParseYamlDocuments(*rendered);
  ASSERT_TRUE(docs.ok()) << docs.error();
  ASSERT_EQ(docs->size(), 1u);
  ASSERT_EQ((*docs)[0]["kind"], "PrometheusRule");
  const Json groups = (*docs)[0]["spec"]["groups"];
  std::map<std::string, Json> rules;
  for (const Json& g : groups)
    for (const Json& r : g["rules"]) rules[r.value("alert", "")] = r;
  ASSERT_EQ(rules.size(), 7u);

  // What the binaries export.
  Result<Exposition> scraped = ScrapeGraintuneBinaries(
      *cp, {.webhook = GRAINTUNE_WEBHOOK_BIN, .operator_ = GRAINTUNE_OPERATOR_BIN});
  ASSERT_TRUE(scraped.ok()) << scraped.error();
  Exposition exported = *scraped;

  // Every metric a rule names is exported, with every label value it matches on.
  static const std::regex selector(R"((graintune_[a-z_]+)(\{([^}]*)\})?)");
  static const std::regex matcher(R"(([a-z_]+)="([^"]*)\")");
  for (const auto& [alert, rule] : rules) {
    const std::string expr = rule["expr"];
    for (std::sregex_iterator it(expr.begin(), expr.end(), selector), end; it != end; ++it) {
      const std::string name = (*it)[1];
      EXPECT_TRUE(exported.HasFamily(name)) << alert << " names " << name << ", which nothing exports";
      const std::string matchers = (*it)[3];
      for (std::sregex_iterator m(matchers.begin(), matchers.end(), matcher); m != end; ++m) {
        const std::string wanted = (*m)[1].str() + "=\"" + (*m)[2].str() + "\"";
        bool seen = false;
        for (const std::string& labels : exported.samples[name]) seen |= labels.find(wanted) != std::string::npos;
        EXPECT_TRUE(seen) << alert << " matches " << name << "{" << wanted << "}, which is never exported";
      }
    }
  }

  // promtool: the rules load, and each alert fires on its failure and not on a healthy series.
  const std::string rules_file = cp->dir() + "/graintune-rules.json";
  ASSERT_TRUE(WriteFile(rules_file, Json{{"groups", groups}}.dump(2)).ok());
  Result<std::string> checked = Promtool({"check", "rules", rules_file});
  ASSERT_TRUE(checked.ok()) << checked.error();

  const std::string requests = "graintune_webhook_requests_total{kind=\"Pod\",outcome=";
  const std::string bucket = "graintune_webhook_request_duration_seconds_bucket{le=\"1\"}";
  const std::string count = "graintune_webhook_request_duration_seconds_count";
  const std::string op_total = "graintune_operator_total{kind=";
  Json tests = Json::array({
      Case("10% fail open", {{requests + "\"mutated\"}", "0+90x40"}, {requests + "\"failed_open\"}", "0+10x40"}},
           rules["GraintuneWebhookFailingOpen"], true),
      Case("1% fail open", {{requests + "\"mutated\"}", "0+99x40"}, {requests + "\"failed_open\"}", "0+1x40"}},
           rules["GraintuneWebhookFailingOpen"], false),
      Case("rejecting", {{requests + "\"mutated\"}", "0+90x40"}, {requests + "\"rejected_request\"}", "0+1x40"}},
           rules["GraintuneWebhookRejectingRequests"], true),
      Case("not rejecting", {{requests + "\"mutated\"}", "0+90x40"}, {requests + "\"rejected_request\"}", "0x40"}},
           rules["GraintuneWebhookRejectingRequests"], false),
      Case("2% slower than 1 s", {{bucket, "0+98x40"}, {count, "0+100x40"}}, rules["GraintuneWebhookSlow"], true),
      Case("all within 1 s", {{bucket, "0+100x40"}, {count, "0+100x40"}}, rules["GraintuneWebhookSlow"], false),
      Case("two replicas, none leads",
           {{"graintune_operator_leader{pod=\"a\"}", "0x40"}, {"graintune_operator_leader{pod=\"b\"}", "0x40"}},
           rules["GraintuneOperatorNoLeader"], true),
      Case("no operator at all", {{requests + "\"mutated\"}", "0+1x40"}}, rules["GraintuneOperatorNoLeader"], true),
      Case("one leads",
           {{"graintune_operator_leader{pod=\"a\"}", "1x40"}, {"graintune_operator_leader{pod=\"b\"}", "0x40"}},
           rules["GraintuneOperatorNoLeader"], false),
      Case("20% of reconciles fail", {{op_total + "\"reconcile\"}", "0+10x40"}, {op_total + "\"reconcile_error\"}", "0+2x40"}},
           rules["GraintuneOperatorReconcileErrors"], true),
      Case("reconciles fine", {{op_total + "\"reconcile\"}", "0+10x40"}, {op_total + "\"reconcile_error\"}", "0x40"}},
           rules["GraintuneOperatorReconcileErrors"], false),
      Case("60% of scrapes fail", {{op_total + "\"scrape\"}", "0+10x40"}, {op_total + "\"scrape_error\"}", "0+6x40"}},
           rules["GraintuneExportersUnreachable"], true),
      Case("10% of scrapes fail", {{op_total + "\"scrape\"}", "0+10x40"}, {op_total + "\"scrape_error\"}", "0+1x40"}},
           rules["GraintuneExportersUnreachable"], false),
      Case("a run ended early 10 minutes ago", {{op_total + "\"ended_early\"}", "0x20 1x20"}},
           rules["GraintuneRunEndedEarly"], true),
      Case("no run ended early", {{op_total + "\"ended_early\"}", "0x40"}, {op_total + "\"reconcile\"}", "0+10x40"}},
           rules["GraintuneRunEndedEarly"], false),
  });
  const std::string tests_file = cp->dir() + "/graintune-rules-test.json";
  ASSERT_TRUE(WriteFile(tests_file, Json{{"rule_files", {rules_file}}, {"evaluation_interval", "1m"},
                                         {"tests", tests}}.dump(2)).ok());
  Result<std::string> tested = Promtool({"test", "rules", tests_file});
  ASSERT_TRUE(tested.ok()) << tested.error();
  EXPECT_NE(tested->find("SUCCESS"), std::string::npos) << *tested;
}

}  // namespace
}  // namespace graintune::testing
