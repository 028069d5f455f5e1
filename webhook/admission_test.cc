#include "webhook/admission.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <fstream>
#include <sstream>

#include "kube/base64.h"
#include "workload/in_memory_sources.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

std::string Unbase64(const std::string& in) {
  std::string out(in.size(), '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  while (!out.empty() && out.back() == '\0') out.pop_back();  // padding
  return out;
}

json JobObject() {
  return json::parse(R"({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
    "spec": {"template": {"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "ct5lp-hightpu-4t"},
    "containers": [{"name": "t", "image": "maxtext", "command": ["python3", "-m", "MaxText.train"],
    "args": ["MaxText/configs/base.yml", "grain_worker_count=-1"],
    "resources": {"limits": {"google.com/tpu": "4"}}}]}}}})");
}

json ReviewOf(const json& object, const std::string& ns = "team-a", bool dry_run = false) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "u-1"},
            {"kind", {{"group", "batch"}, {"version", "v1"}, {"kind", "Job"}}},
            {"operation", "CREATE"},
            {"namespace", ns},
            {"dryRun", dry_run},
            {"object", object}}}};
}

class AdmissionTest : public ::testing::Test {
 protected:
  Admitter admitter_{PlannerSources{shapes_, history_, configmaps_, policies_}};
  workload::MachineTypeTableShapes shapes_;
  workload::InMemoryHistory history_;
  workload::InMemoryConfigMaps configmaps_;
  workload::FixedPolicy policies_;
};

TEST_F(AdmissionTest, MutatesWithAPatchThatAppliesToTheObject) {
  AdmissionResult r = admitter_.Admit(ReviewOf(JobObject()).dump());
  ASSERT_EQ(r.http_status, 200);
  EXPECT_EQ(r.outcome, "mutated");
  json out = json::parse(r.body);
  EXPECT_EQ(out["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(out["response"]["uid"], "u-1");
  EXPECT_EQ(out["response"]["allowed"], true);
  EXPECT_EQ(out["response"]["patchType"], "JSONPatch");
  json patch = json::parse(Unbase64(out["response"]["patch"].get<std::string>()));
  json patched = JobObject().patch(patch);
  const std::string arg = patched["spec"]["template"]["spec"]["containers"][0]["args"][1];
  EXPECT_EQ(arg, "grain_worker_count=" +
                     patched["metadata"]["annotations"]["graintune.dev/worker-count"].get<std::string>());
  EXPECT_NE(arg, "grain_worker_count=-1");
}

TEST_F(AdmissionTest, DryRunGetsTheSameAnswer) {
  EXPECT_EQ(json::parse(admitter_.Admit(ReviewOf(JobObject(), "team-a", true).dump()).body)["response"],
            json::parse(admitter_.Admit(ReviewOf(JobObject()).dump()).body)["response"]);
}

TEST_F(AdmissionTest, BadInputsGetDefinedAnswers) {
  struct Case {
    std::string name, body;
    int status;
    std::string outcome, must_contain;
  };
  json wrong_version = ReviewOf(JobObject());
  wrong_version["apiVersion"] = "admission.k8s.io/v1beta1";
  json no_uid = ReviewOf(JobObject());
  no_uid["request"].erase("uid");
  json update = ReviewOf(JobObject());
  update["request"]["operation"] = "UPDATE";
  json no_object = ReviewOf(JobObject());
  no_object["request"]["object"] = "grain_worker_count=-1";
  json other_kind = ReviewOf(JobObject());
  other_kind["request"]["kind"] = {{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}};
  json weird_kind = ReviewOf(JobObject());
  weird_kind["request"]["kind"] = "Job";
  json broken_object = ReviewOf(json::parse(R"({"metadata": 5, "spec": {"template": []}})"));
  broken_object["request"]["object"]["x"] = "grain_worker_count=-1";
  json minus_one_in_odd_place = ReviewOf(JobObject());
  minus_one_in_odd_place["request"]["object"]["spec"]["template"]["spec"]["containers"][0]["args"][1] =
      "grain_worker_count=-1x";
  const Case cases[] = {
      {"not json", "{not json", 400, "rejected_request", "malformed"},
      {"json array", "[1,2]", 400, "rejected_request", "malformed"},
      {"empty", "", 400, "rejected_request", "malformed"},
      {"no uid", no_uid.dump(), 400, "rejected_request", "no request.uid"},
      {"oversize", std::string(3 * 1024 * 1024 + 1, ' '), 400, "rejected_request", "too large"},
      {"wrong version", wrong_version.dump(), 200, "failed_open", "expected admission.k8s.io/v1"},
      {"update", update.dump(), 200, "unchanged", "\"allowed\":true"},
      {"kube-system", ReviewOf(JobObject(), "kube-system").dump(), 200, "unchanged", "\"allowed\":true"},
      {"other kind", other_kind.dump(), 200, "unchanged", "\"allowed\":true"},
      {"kind not an object", weird_kind.dump(), 200, "unchanged", "\"allowed\":true"},
      {"object not an object", no_object.dump(), 200, "failed_open", "no object"},
      {"broken object", broken_object.dump(), 200, "unchanged", "\"allowed\":true"},
      {"-1x is not -1", minus_one_in_odd_place.dump(), 200, "unchanged", "\"allowed\":true"},
  };
  for (const Case& c : cases) {
    AdmissionResult r = admitter_.Admit(c.body);
    EXPECT_EQ(r.http_status, c.status) << c.name;
    EXPECT_EQ(r.outcome, c.outcome) << c.name;
    EXPECT_NE(r.body.find(c.must_contain), std::string::npos) << c.name << ": " << r.body;
    EXPECT_EQ(r.body.find("\"patch\""), std::string::npos) << c.name;
  }
}

// A request with nothing of graintune's in it is answered from its header: the same answer the
// full path gives, and a body broken after the header is not read (the API server never sends
// one; graintune allows it like any other object it has nothing to do with).
TEST_F(AdmissionTest, RequestsWithoutMarkersAreAnsweredFromTheirHeader) {
  const std::string head =
      R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u-9",)"
      R"("kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","namespace":"web",)";
  const std::string pod = head + R"("object":{"kind":"Pod","spec":{"containers":[{"name":"nginx"}]}}}})";
  AdmissionResult fast = admitter_.Admit(pod);
  EXPECT_EQ(fast.http_status, 200);
  EXPECT_EQ(fast.outcome, "unchanged");
  EXPECT_EQ(fast.kind, "Pod");
  EXPECT_EQ(json::parse(fast.body),
            json::parse(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
                        R"("response":{"uid":"u-9","allowed":true}})"));
  // The full path (a marker in the body) answers such a Pod the same way.
  AdmissionResult full = admitter_.Admit(head + R"("object":{"kind":"Pod","metadata":{"labels":)"
                                                R"({"x":"graintune.dev"}}}}})");
  EXPECT_EQ(full.body, fast.body);
  EXPECT_EQ(full.kind, fast.kind);

  AdmissionResult broken_tail = admitter_.Admit(head + R"("object":{"kind": oops)");
  EXPECT_EQ(broken_tail.http_status, 200);
  EXPECT_EQ(json::parse(broken_tail.body)["response"]["uid"], "u-9");
  // Broken before the header is complete: the full path's 400.
  EXPECT_EQ(admitter_.Admit(R"({"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid")")
                .http_status,
            400);
}

TEST_F(AdmissionTest, HistoryDownFailsOpenToAFreshDecision) {
  history_.FailWithForTest("GrainTuning cache not synced");
  AdmissionResult r = admitter_.Admit(ReviewOf(JobObject()).dump());
  EXPECT_EQ(r.outcome, "mutated");
  EXPECT_NE(r.body.find("history unavailable"), std::string::npos);
}

TEST_F(AdmissionTest, Base64OfThePatch) {
  EXPECT_EQ(kube::Base64Encode(""), "");
  EXPECT_EQ(kube::Base64Encode("f"), "Zg==");
  EXPECT_EQ(kube::Base64Encode("foobar"), "Zm9vYmFy");
}

// Header fields of the wrong type are answered (allowed, unchanged), never thrown.
TEST_F(AdmissionTest, NonStringHeaderFieldsAreAnsweredNotThrown) {
  const std::vector<json::json_pointer> fields = {
      json::json_pointer("/apiVersion"), json::json_pointer("/kind"),
      json::json_pointer("/request/operation"), json::json_pointer("/request/namespace"),
      json::json_pointer("/request/kind"), json::json_pointer("/request/kind/kind"),
      json::json_pointer("/request/kind/group")};
  for (const json::json_pointer& field : fields) {
    for (const json& odd : {json(42), json::object(), json::array({"x"}), json(nullptr)}) {
      json review = ReviewOf(JobObject());
      review[field] = odd;
      AdmissionResult r = admitter_.Admit(review.dump());
      ASSERT_EQ(r.http_status, 200) << field.to_string() << " = " << odd.dump();
      const json out = json::parse(r.body);
      EXPECT_EQ(out["response"]["allowed"], true) << field.to_string();
      EXPECT_EQ(out["response"]["uid"], "u-1") << field.to_string();
      EXPECT_FALSE(out["response"].contains("patch")) << field.to_string() << " = " << odd.dump();
    }
  }
}

// An object nested past the limit (here 131,072 arrays deep, 256 KiB) is a clear 400, read in
// one pass and never copied: a recursive copy of it used to end the process.
TEST_F(AdmissionTest, NestingPastTheLimitIsRejectedNotACrash) {
  auto nested = [](size_t depth) {
    return std::string(depth, '[') + "\"grain_worker_count=-1\"" + std::string(depth, ']');
  };
  json review = ReviewOf(JobObject());
  review["request"]["object"]["spec"]["template"]["spec"]["containers"][0]["args"] = "PLACEHOLDER";
  const std::string text = review.dump();
  const size_t at = text.find("\"PLACEHOLDER\"");
  for (size_t depth : {size_t{600}, size_t{131072}}) {
    std::string body = text;
    body.replace(at, std::string("\"PLACEHOLDER\"").size(), nested(depth));
    AdmissionResult r = admitter_.Admit(body);
    EXPECT_EQ(r.http_status, 400) << depth;
    EXPECT_EQ(r.outcome, "rejected_request");
    EXPECT_NE(r.body.find("nested deeper than 512 levels"), std::string::npos) << r.body;
  }
  // Within the limit: read and answered (args that are not strings are left alone).
  std::string body = text;
  body.replace(at, std::string("\"PLACEHOLDER\"").size(), nested(500));
  AdmissionResult r = admitter_.Admit(body);
  EXPECT_EQ(r.http_status, 200);
  EXPECT_EQ(json::parse(r.body)["response"]["allowed"], true);
}

// Over the work budget: allowed unchanged with a warning that says which budget, never a
// stall or a partial patch; the same request within budget is tuned.
class WorkBudgetTest : public AdmissionTest {
 protected:
  AdmissionResult AdmitWith(WorkLimits limits, const std::string& body) {
    AdmitterOptions options;
    options.limits = limits;
    return Admitter(PlannerSources{shapes_, history_, configmaps_, policies_}, options).Admit(body);
  }
  static void ExpectAllowedUnchanged(const AdmissionResult& r, const std::string& budget,
                                     const std::string& warning) {
    EXPECT_EQ(r.http_status, 200);
    EXPECT_EQ(r.outcome, "over_budget");
    EXPECT_EQ(r.over_budget, budget);
    const json out = json::parse(r.body);
    EXPECT_EQ(out["response"]["uid"], "u-1");
    EXPECT_EQ(out["response"]["allowed"], true);
    EXPECT_FALSE(out["response"].contains("patch"));
    ASSERT_EQ(out["response"]["warnings"].size(), 1u);
    EXPECT_NE(out["response"]["warnings"][0].get<std::string>().find(warning), std::string::npos)
        << out["response"]["warnings"][0];
  }
};

TEST_F(WorkBudgetTest, TooManyJsonValues) {
  json object = JobObject();
  object["metadata"]["labels"] = json::object();
  for (int i = 0; i < 2000; ++i) object["metadata"]["labels"]["l" + std::to_string(i)] = "v";
  const std::string body = ReviewOf(object).dump();
  ExpectAllowedUnchanged(AdmitWith({.max_json_values = 1000}, body), "values",
                         "more than 1000 JSON values");
  EXPECT_EQ(AdmitWith({.max_json_values = 5000}, body).outcome, "mutated");
  // No request.uid before the limit: nothing to answer to.
  json no_uid = ReviewOf(object);
  no_uid["request"].erase("uid");
  AdmissionResult r = AdmitWith({.max_json_values = 1000}, no_uid.dump());
  EXPECT_EQ(r.http_status, 400);
  EXPECT_NE(r.body.find("over 1000 JSON values"), std::string::npos) << r.body;
}

TEST_F(WorkBudgetTest, TooManySites) {
  json object = JobObject();
  std::string script = "python3 -m MaxText.train base.yml";
  for (int i = 0; i < 50; ++i) script += " grain_worker_count=-1";
  object["spec"]["template"]["spec"]["containers"][0]["command"] = {"bash", "-c", script};
  object["spec"]["template"]["spec"]["containers"][0].erase("args");
  const std::string body = ReviewOf(object).dump();
  ExpectAllowedUnchanged(AdmitWith({.max_sites = 49}, body), "sites", "more than 49 grain_worker_count sites");
  AdmissionResult within = AdmitWith({.max_sites = 50}, body);
  EXPECT_EQ(within.outcome, "mutated");
  EXPECT_EQ(within.mutations, 50);
}

TEST_F(WorkBudgetTest, PastTheDeadline) {
  // A deadline already behind the request's arrival: the first check stops it.
  ExpectAllowedUnchanged(AdmitWith({.max_time = std::chrono::milliseconds(-1)}, ReviewOf(JobObject()).dump()),
                         "time", "more than -1 ms of work");
}

std::string CorpusFile(const std::string& name) {
  std::ifstream in(std::string(GRAINTUNE_FUZZ_CORPUS) + "/admission/" + name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Inputs the fuzzer found (kept in its corpus). A warning cut at its length limit inside a
// UTF-8 character (a tuning key of 400 "é") made the response's dump throw, and the whole
// mutation was lost as an "internal error".
TEST_F(AdmissionTest, ALongWarningIsCutBetweenCharacters) {
  const std::string body = CorpusFile("warning-cut-mid-character.json");
  ASSERT_FALSE(body.empty());
  AdmissionResult r = admitter_.Admit(body);
  ASSERT_EQ(r.http_status, 200);
  EXPECT_EQ(r.body.find("internal error"), std::string::npos) << r.body;
  const json out = json::parse(r.body);  // valid UTF-8 throughout
  for (const json& w : out["response"].value("warnings", json::array()))
    EXPECT_LE(w.get<std::string>().size(), 603u);
}

// A container name of the wrong type (possible in a JobSet, a CRD mutated before its schema
// is checked) is read as no name, not a type_error caught as "internal error".
TEST_F(AdmissionTest, FieldsOfTheWrongTypeAreReadAsAbsent) {
  json object = JobObject();
  object["spec"]["template"]["spec"]["containers"][0]["name"] = 7;
  object["spec"]["template"]["spec"]["affinity"] = json::parse(R"({"nodeAffinity":
    {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions":
    [{"key": "cloud.google.com/gke-tpu-topology", "operator": null, "values": ["2x2"]}]}]}}})");
  AdmissionResult r = admitter_.Admit(ReviewOf(object).dump());
  ASSERT_EQ(r.http_status, 200);
  EXPECT_EQ(r.body.find("internal error"), std::string::npos) << r.body;
  EXPECT_EQ(r.outcome, "mutated") << r.body;
}

}  // namespace
}  // namespace graintune::webhook
