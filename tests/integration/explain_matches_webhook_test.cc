// `graintune explain` gives the webhook's answer: every example manifest goes through both
// paths, explain's JSONPatch applied locally against the object the real kube-apiserver stores
// after calling the real graintune-webhook (a server-side dry run), under the same policy (the
// chart's default GrainTunePolicy, created in the cluster) and the same ConfigMaps.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.h"
#include "cli/default_policy.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/controlplane/webhook_under_test.h"
#include "workload/yaml_json.h"

namespace graintune::testing {
namespace {

using nlohmann::json;

// Everything in `expected` is in `actual` (the API server adds defaults and its own volumes,
// never removes).
bool Contains(const json& actual, const json& expected, const std::string& at, std::string* why) {
  if (expected.is_object()) {
    if (!actual.is_object()) return *why = at + ": not an object", false;
    for (const auto& [key, value] : expected.items()) {
      if (!actual.contains(key)) return *why = at + "/" + key + ": missing", false;
      if (!Contains(actual.at(key), value, at + "/" + key, why)) return false;
    }
    return true;
  }
  if (expected.is_array()) {
    // Admission may add items (the ServiceAccount plugin's token volume and mounts, placed
    // before graintune's): every expected item must appear, in order.
    if (!actual.is_array()) return *why = at + ": not an array", false;
    size_t next = 0;
    for (size_t i = 0; i < expected.size(); ++i) {
      std::string inner;
      while (next < actual.size() && !Contains(actual[next], expected[i], at, &inner)) ++next;
      if (next == actual.size())
        return *why = at + "/" + std::to_string(i) + ": " + expected[i].dump() + " not found in " +
                      actual.dump(), false;
      ++next;
    }
    return true;
  }
  // The API server writes quantities as strings: limits 4 is stored as "4".
  if (expected.is_number() && actual.is_string() && actual.get<std::string>() == expected.dump())
    return true;
  if (actual != expected) return *why = at + ": " + actual.dump() + ", want " + expected.dump(), false;
  return true;
}

// graintune.dev/ annotations of a metadata object.
std::map<std::string, std::string> GraintuneAnnotations(const json& object, const std::string& pointer) {
  std::map<std::string, std::string> out;
  const json::json_pointer p(pointer);
  if (!object.contains(p)) return out;
  for (const auto& [key, value] : object.at(p).items())
    if (key.rfind("graintune.dev/", 0) == 0 && value.is_string()) out[key] = value.get<std::string>();
  return out;
}

// Removes "; no Node matches the pod's node selection" from every graintune.dev/reason.
void StripNoNodeNote(json& value) {
  if (value.is_array()) {
    for (json& item : value) StripNoNodeNote(item);
    return;
  }
  if (!value.is_object()) return;
  for (auto& [key, item] : value.items()) {
    if (key == "graintune.dev/reason" && item.is_string()) {
      std::string text = item;
      const std::string note = "; no Node matches the pod's node selection";
      for (size_t at; (at = text.find(note)) != std::string::npos;) text.erase(at, note.size());
      item = text;
    } else {
      StripNoNodeNote(item);
    }
  }
}

std::string Slurp(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(ExplainMatchesWebhook, EveryExampleGetsTheSamePatchFromBothPaths) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  // The cluster as the chart leaves it: its default policy; plus the examples' ConfigMaps.
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, cli::ChartDefaultPolicyObject().dump()).ok());
  // No controller-manager here to make the namespace's default ServiceAccount pods need.
  (void)cp->Kubectl({"create", "serviceaccount", "default", "-n", "default"});
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(GRAINTUNE_EXAMPLES_DIR))
    if (e.path().extension() == ".yaml" && e.path().filename() != "policies.yaml")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 5u);
  for (const std::string& file : files) {
    auto docs = workload::ParseYamlDocuments(Slurp(file));
    ASSERT_TRUE(docs.ok()) << file << ": " << docs.error();
    for (const json& doc : *docs) {
      if (doc.value("kind", "") != "ConfigMap") continue;
      ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, doc.dump()).ok()) << file;
    }
  }
  // Started after them, so its caches hold them once it is ready.
  auto webhook = WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN});
  ASSERT_TRUE(webhook.ok()) << webhook.error();

  int compared = 0, tuned = 0;
  for (const std::string& file : files) {
    std::ostringstream out, err;
    std::istringstream in;
    ASSERT_EQ(cli::RunExplain({file, "-o", "json"}, in, out, err), 0) << file << ": " << err.str();
    const json report = json::parse(out.str());
    auto docs = workload::ParseYamlDocuments(Slurp(file));
    ASSERT_TRUE(docs.ok());
    size_t entry = 0;
    for (const json& doc : *docs) {
      const std::string kind = doc.value("kind", "");
      if (kind != "Pod" && kind != "Job" && kind != "JobSet") continue;
      ASSERT_LT(entry, report.size()) << file;
      const json& explained = report[entry++];
      const json expected = doc.patch(explained["patch"]);
      Result<std::string> stored =
          cp->Kubectl({"create", "--dry-run=server", "-o", "json", "-f", "-"}, doc.dump());
      ASSERT_TRUE(stored.ok()) << file << ": " << stored.error();
      // kubectl's output holds the webhook's warnings ("Warning: ...") before the object.
      const size_t brace = stored->find('{');
      ASSERT_NE(brace, std::string::npos) << *stored;
      json actual = json::parse(stored->substr(brace));
      // The one thing that may differ: the webhook looked for Nodes (none here) and says so in
      // the reasons' host source (on the object and its pod templates); explain never looks at
      // a cluster.
      StripNoNodeNote(actual);
      SCOPED_TRACE(file + " " + explained["object"].get<std::string>());
      std::string why;
      EXPECT_TRUE(Contains(actual, expected, "", &why))
          << why << "\nexplain's patch: " << explained["patch"].dump() << "\n" << (*webhook)->Log();
      // Nothing graintune wrote on the webhook's path is missing from explain's.
      for (const char* meta : {"/metadata/annotations", "/spec/template/metadata/annotations"})
        EXPECT_EQ(GraintuneAnnotations(actual, meta), GraintuneAnnotations(expected, meta)) << meta;
      const json::json_pointer init("/spec/template/spec/initContainers");
      EXPECT_EQ(actual.contains(init) ? actual.at(init).size() : 0,
                expected.contains(init) ? expected.at(init).size() : 0);
      ++compared;
      if (explained["outcome"] == "Tuned") ++tuned;
    }
    EXPECT_EQ(entry, report.size()) << file;
  }
  EXPECT_GE(compared, 5);
  EXPECT_GE(tuned, 4) << "most examples are tuned; a comparison of untouched objects proves little";
  std::printf("explain and the webhook agreed on %d objects (%d tuned)\n", compared, tuned);
}

}  // namespace
}  // namespace graintune::testing
