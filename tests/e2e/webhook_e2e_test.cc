// graintune-webhook registered in a real control plane (MutatingWebhookConfiguration with url +
// caBundle) with KWOK TPU nodes: examples applied with kubectl are mutated with values computed
// from the Nodes' allocatable figures, read back from the API server.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <regex>
#include <thread>

#include "kube/config.h"
#include "tests/controlplane/https_call.h"
#include "tests/controlplane/result_text.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/controlplane/tpu_nodes.h"
#include "tests/controlplane/wait_for.h"
#include "tests/controlplane/webhook_under_test.h"

namespace graintune::testing {
namespace {

using kube::Json;

class WebhookE2E : public ::testing::Test {
 protected:
  static void CreateNodes(ControlPlane& cp) {
    static bool created = false;
    if (created) return;
    std::shared_ptr<kube::Client> c = cp.AdminClient();
    std::vector<TpuNodeSpec> specs;
    for (int i = 0; i < 8; ++i) specs.push_back({.name = "tpu-v6e-" + std::to_string(i)});
    // One host of the slice runs heavy DaemonSets: far less cpu is allocatable there.
    specs[7].allocatable_cpu = 16;
    for (int i = 0; i < 2; ++i)
      specs.push_back({.name = "tpu-v5p-" + std::to_string(i), .machine_type = "ct5p-hightpu-4t",
                       .accelerator = "tpu-v5p-slice", .topology = "2x2x2"});
    for (const TpuNodeSpec& s : specs) {
      Result<Json> node = TpuNode(s);
      ASSERT_TRUE(node.ok()) << node.error();
      kube::ApiResult<Json> r = c->Create(kube::resources::kNodes, "", *node);
      ASSERT_TRUE(r.ok() || r.error().IsAlreadyExists()) << r.status().message();
    }
    created = true;
  }

  static std::string Annotation(const Json& obj, const std::string& key) {
    return obj.value("metadata", Json::object()).value("annotations", Json::object()).value(key, "");
  }
};

TEST_F(WebhookE2E, MutatesExamplesWithValuesFromTheKwokNodes) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
  CreateNodes(*cp);
  Result<std::unique_ptr<WebhookUnderTest>> webhook =
      WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN});
  ASSERT_TRUE(webhook.ok()) << webhook.error();
  std::shared_ptr<kube::Client> c = cp->AdminClient();
  const std::string examples = GRAINTUNE_EXAMPLES_DIR;

  // The xpk-style JobSet: its template holds the first attempt's value (the run checkpoints
  // Grain's iterator, so every restart keeps it), the JobSet is annotated with it, and kubectl
  // shows the admission warning, which says so.
  Result<std::string> applied = cp->Kubectl({"apply", "-f", examples + "/llama3-8b-v6e-32-jobset.yaml"});
  ASSERT_TRUE(applied.ok()) << applied.error() << "\nwebhook log:\n" << (*webhook)->Log();
  EXPECT_NE(applied->find("Warning: graintune: grain_worker_count=-1 will be"), std::string::npos)
      << *applied;
  EXPECT_NE(applied->find("every restart keeps it"), std::string::npos) << *applied;
  kube::ApiResult<Json> js = c->Get(kube::resources::kJobSets, "default", "llama3-8b-v6e-32");
  ASSERT_TRUE(js.ok()) << js.status().message();
  const std::string first = Annotation(*js, "graintune.dev/first-attempt-worker-count");
  const std::string reason = Annotation(*js, "graintune.dev/reason");
  ASSERT_FALSE(first.empty()) << js->dump(2);
  // The tightest of the 8 matching v6e hosts decided, not the machine-type table.
  EXPECT_NE(reason.find("16.0 cpu"), std::string::npos) << reason;
  EXPECT_NE(reason.find("node tpu-v6e-7 (tightest of 8 matching nodes)"), std::string::npos) << reason;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(reason, m, std::regex("cpu budget (\\d+)"))) << reason;
  EXPECT_EQ(first, m[1].str()) << "the cpu budget of the 16-cpu host bounds the value: " << reason;
  EXPECT_EQ((*js)["spec"].dump().find("grain_worker_count=-1"), std::string::npos);
  EXPECT_NE((*js)["spec"].dump().find("grain_worker_count=" + first + " "), std::string::npos);

  // The JobSet controller creates the child Job of attempt 0: its template gets the value the
  // JobSet was told, in the script, with everything else as written.
  Json child;
  for (int i = 0; i < 300 && child.is_null(); ++i) {
    kube::ListOptions lo;
    lo.label_selector = "jobset.sigs.k8s.io/jobset-name=llama3-8b-v6e-32";
    kube::ApiResult<kube::ObjectList> jobs = c->List(kube::resources::kJobs, "default", lo);
    if (jobs.ok() && !jobs->items.empty()) child = jobs->items[0];
    else std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(child.is_null()) << "the JobSet controller made no Job";
  const std::string script = child["spec"]["template"]["spec"]["containers"][0]["command"].back();
  EXPECT_NE(script.find("grain_worker_count=" + first + " "), std::string::npos) << script;
  EXPECT_EQ(Annotation(child["spec"]["template"], "graintune.dev/worker-count"), first);

  // A plain Job with M_GRAIN_WORKER_COUNT=-1 on v5p: the Job's template is rewritten and marked
  // managed; the controller-manager creates its Pod, KWOK runs it on a v5p node, and the Pod
  // carries the same value.
  applied = cp->Kubectl({"apply", "-f", examples + "/v5p-job-env.yaml"});
  ASSERT_TRUE(applied.ok()) << applied.error();
  kube::ApiResult<Json> job = c->Get(kube::resources::kJobs, "default", "llama2-70b-v5p");
  ASSERT_TRUE(job.ok());
  const Json env = (*job)["spec"]["template"]["spec"]["containers"][0]["env"];
  const std::string job_value = env[0]["value"];
  EXPECT_NE(job_value, "-1");
  EXPECT_GT(std::stoi(job_value), 1);
  EXPECT_EQ((*job)["spec"]["template"]["metadata"]["labels"]["graintune.dev/managed"], "true")
      << job->dump(2);
  EXPECT_NE(Annotation((*job)["spec"]["template"], "graintune.dev/reason").find("node tpu-v5p-"),
            std::string::npos);

  Json pod;
  for (int i = 0; i < 300 && pod.is_null(); ++i) {
    kube::ListOptions lo;
    lo.label_selector = "job-name=llama2-70b-v5p";
    kube::ApiResult<kube::ObjectList> pods = c->List(kube::resources::kPods, "default", lo);
    if (pods.ok() && !pods->items.empty() &&
        pods->items[0].value("status", Json::object()).value("phase", "") == "Running")
      pod = pods->items[0];
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_FALSE(pod.is_null()) << "the Job's pod never ran on a KWOK node:\n"
                               << Text(cp->Kubectl({"describe", "pods", "-l", "job-name=llama2-70b-v5p"}))
                               << Text(cp->Kubectl({"describe", "job", "llama2-70b-v5p"}));
  EXPECT_EQ(pod["spec"]["containers"][0]["env"][0]["value"], job_value);
  EXPECT_EQ(Annotation(pod, "graintune.dev/worker-count"), job_value);
  EXPECT_EQ(pod["spec"]["nodeName"].get<std::string>().rfind("tpu-v5p-", 0), 0u);
  EXPECT_EQ(pod["status"]["podIP"].get<std::string>().rfind("127.", 0), 0u);  // loopback CIDR

  // No Node for v5e in this cluster: the table decides, and the reason says so.
  applied = cp->Kubectl({"apply", "-f", examples + "/v5e-job-configmap.yaml"});
  ASSERT_TRUE(applied.ok()) << applied.error();
  kube::ApiResult<Json> v5e = c->Get(kube::resources::kJobs, "default", "gemma2-9b-v5e");
  ASSERT_TRUE(v5e.ok());
  const std::string v5e_reason = Annotation((*v5e)["spec"]["template"], "graintune.dev/reason");
  EXPECT_NE(v5e_reason.find("machine-type table"), std::string::npos) << v5e_reason;
  EXPECT_NE(v5e_reason.find("no Node matches"), std::string::npos) << v5e_reason;

  // Objects without -1 pass untouched.
  applied = cp->Kubectl({"create", "job", "plain", "--image=busybox", "--", "echo", "hi"});
  ASSERT_TRUE(applied.ok()) << applied.error();
  kube::ApiResult<Json> plain = c->Get(kube::resources::kJobs, "default", "plain");
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(Annotation((*plain)["spec"]["template"], "graintune.dev/reason").empty());
}

TEST_F(WebhookE2E, MultisliceAnnotationOnlyAndPolicyExamples) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
  CreateNodes(*cp);
  Result<std::unique_ptr<WebhookUnderTest>> webhook =
      WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN});
  ASSERT_TRUE(webhook.ok()) << webhook.error();
  std::shared_ptr<kube::Client> c = cp->AdminClient();
  const std::string examples = GRAINTUNE_EXAMPLES_DIR;

  // Multislice: both slices' Jobs (and so all their pods) get the JobSet's first-attempt value.
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", examples + "/multislice-jobset.yaml"}).ok());
  kube::ApiResult<Json> js = c->Get(kube::resources::kJobSets, "default", "llama3-8b-2xv6e-16");
  ASSERT_TRUE(js.ok());
  const std::string first = Annotation(*js, "graintune.dev/first-attempt-worker-count");
  ASSERT_FALSE(first.empty());
  std::vector<Json> jobs;
  for (int i = 0; i < 300 && jobs.size() < 2; ++i) {
    kube::ListOptions lo;
    lo.label_selector = "jobset.sigs.k8s.io/jobset-name=llama3-8b-2xv6e-16";
    auto r = c->List(kube::resources::kJobs, "default", lo);
    if (r.ok()) jobs = r->items;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(jobs.size(), 2u);
  for (const Json& j : jobs) {
    EXPECT_EQ(Annotation(j["spec"]["template"], "graintune.dev/worker-count"), first);
    EXPECT_EQ(Annotation(j["spec"]["template"], "graintune.dev/dataset"), "c4-en-raw");
  }

  // Annotation only: the pod gets M_GRAIN_WORKER_COUNT (no node of its type here: the table).
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", examples + "/annotation-only-pod.yaml"}).ok());
  kube::ApiResult<Json> pod = c->Get(kube::resources::kPods, "default", "gemma2-2b-smoke");
  ASSERT_TRUE(pod.ok());
  bool env_set = false;
  for (const Json& e : (*pod)["spec"]["containers"][0].value("env", Json::array()))
    env_set |= e.value("name", "") == "M_GRAIN_WORKER_COUNT" && e.value("value", "") != "-1";
  EXPECT_TRUE(env_set) << pod->dump(2);

  // Policies: the team's policy caps a Job in its namespace; elsewhere the default applies.
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", examples + "/policies.yaml"}).ok());
  ASSERT_TRUE(cp->Kubectl({"create", "namespace", "llm-team"}).ok());
  ASSERT_TRUE(cp->Kubectl({"label", "namespace", "llm-team", "team=llm"}).ok());
  Result<std::string> manifest = kube::ReadFileText(examples + "/v5p-job-env.yaml");
  std::string text = *manifest;
  text.replace(text.find("namespace: default"), 18, "namespace: llm-team");
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the webhook's policy cache catches up
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, text).ok());
  kube::ApiResult<Json> capped = c->Get(kube::resources::kJobs, "llm-team", "llama2-70b-v5p");
  ASSERT_TRUE(capped.ok());
  const std::string reason = Annotation((*capped)["spec"]["template"], "graintune.dev/reason");
  const int value = std::stoi((*capped)["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"].get<std::string>());
  EXPECT_GE(value, 2);
  EXPECT_LE(value, 6) << reason;
}

// A Job whose first attempt gets a practice lap: the launcher's installer init container, its
// volumes and the exporter sidecar meet Pod Security "restricted" wherever the trainer's own pod
// does. The API server's server-side dry run (which calls the webhook) in a namespace that warns
// on and enforces "restricted" reports a violation for a trainer that breaks it, and none once
// the trainer meets it, lap and all.
TEST_F(WebhookE2E, ALappedPodMeetsPodSecurityRestrictedWhereItsTrainerDoes) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
  CreateNodes(*cp);
  Result<std::unique_ptr<WebhookUnderTest>> webhook =
      WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN});
  ASSERT_TRUE(webhook.ok()) << webhook.error();
  ASSERT_TRUE(cp->Kubectl({"create", "namespace", "lap-pss"}).ok());
  ASSERT_TRUE(cp->Kubectl({"label", "namespace", "lap-pss", "pod-security.kubernetes.io/enforce=restricted",
                           "pod-security.kubernetes.io/warn=restricted"}).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"},
                          "apiVersion: graintune.dev/v1alpha1\nkind: GrainTunePolicy\n"
                          "metadata: {name: lap-pss}\nspec:\n  priority: 10\n"
                          "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: lap-pss}}\n"
                          "  lap: {mode: Training, steps: 20}\n").ok());
  // The request's trainer as a plain Job, checkpointing (so its first attempt keeps its value and
  // gets a lap), with `security` as its container's securityContext.
  const auto job = [](const std::string& name, const std::string& security) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: " + name + ", namespace: lap-pss}\n"
           "spec:\n  parallelism: 8\n  completions: 8\n  backoffLimit: 0\n  template:\n    spec:\n"
           "      restartPolicy: Never\n"
           "      nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 4x8}\n"
           "      containers:\n      - name: jax-tpu\n        image: us-docker.pkg.dev/example/maxtext-runner:latest\n"
           "        securityContext: " + security + "\n"
           "        command: [python3, -m, MaxText.train, MaxText/configs/base.yml, run_name=" + name + ",\n"
           "                  model_name=llama3-8b, base_output_directory=gs://example-bucket/runs, dataset_type=grain,\n"
           "                  grain_file_type=arrayrecord, 'grain_train_files=/data/c4-en-raw/*.array_record',\n"
           "                  per_device_batch_size=2, max_target_length=8192, steps=2000, grain_worker_count=-1,\n"
           "                  checkpoint_period=500]\n"
           "        resources: {limits: {google.com/tpu: 4}}\n";
  };
  const auto dry_run = [&](const std::string& manifest) {
    return cp->Kubectl({"apply", "--dry-run=server", "-o", "json", "-f", "-"}, manifest);
  };
  const auto lapped = [](const Result<std::string>& out) {
    if (!out.ok()) return false;
    const Json j = Json::parse(out->substr(std::min(out->find("{\n"), out->size())), nullptr, false);
    if (j.is_discarded()) return false;
    const Json init = j.value("/spec/template/spec/initContainers"_json_pointer, Json::array());
    return !init.empty() && init[0].value("name", "") == "graintune-launcher-install";
  };
  const std::string restricted =
      "{allowPrivilegeEscalation: false, runAsNonRoot: true, runAsUser: 1000, capabilities: {drop: [ALL]}, "
      "seccompProfile: {type: RuntimeDefault}}";
  // The webhook reads policies from its cache: wait until the lap is planned.
  Result<std::string> meets = Status::Error("not run");
  ASSERT_TRUE(WaitFor([&] { return lapped(meets = dry_run(job("meets", restricted))); }, std::chrono::seconds(30)))
      << Text(meets);
  EXPECT_EQ(meets->find("violate PodSecurity"), std::string::npos) << *meets;
  // The check is live: a privileged trainer is reported (on the Job's template, as a warning).
  Result<std::string> breaks = dry_run(job("breaks", "{privileged: true}"));
  ASSERT_TRUE(breaks.ok()) << breaks.error();
  EXPECT_TRUE(lapped(breaks));
  EXPECT_NE(breaks->find("violate PodSecurity"), std::string::npos) << *breaks;
}

TEST_F(WebhookE2E, AStoppedWebhookFailsOpen) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
  CreateNodes(*cp);
  Result<std::unique_ptr<WebhookUnderTest>> webhook =
      WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN, .configuration_name = "down"});
  ASSERT_TRUE(webhook.ok()) << webhook.error();
  (*webhook)->process().Kill();  // registered, but nobody answers
  ASSERT_TRUE(cp->Kubectl({"create", "namespace", "failopen"}).ok());
  Result<std::string> manifest =
      kube::ReadFileText(std::string(GRAINTUNE_EXAMPLES_DIR) + "/v5p-job-env.yaml");
  ASSERT_TRUE(manifest.ok());
  std::string text = *manifest;
  text.replace(text.find("namespace: default"), 18, "namespace: failopen");
  Result<std::string> applied = cp->Kubectl({"apply", "-f", "-"}, text);
  // failurePolicy Ignore: the Job is admitted unchanged rather than refused.
  ASSERT_TRUE(applied.ok()) << applied.error();
  kube::ApiResult<Json> job = cp->AdminClient()->Get(kube::resources::kJobs, "failopen", "llama2-70b-v5p");
  ASSERT_TRUE(job.ok());
  EXPECT_EQ((*job)["spec"]["template"]["spec"]["containers"][0]["env"][0]["value"], "-1");
}

// The serving certificate is rotated twice (as cert-manager or the webhook's own renewal swaps
// the Secret's files) while 8 clients send admissions on fresh TLS connections: every request
// is answered, and each new certificate is seen being served.
TEST_F(WebhookE2E, ACertificateRotatedUnderLoadFailsNoRequest) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  Result<std::unique_ptr<WebhookUnderTest>> webhook =
      WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN, .configuration_name = "rotate",
                                    .register_configuration = false});
  ASSERT_TRUE(webhook.ok()) << webhook.error();
  const std::string review = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
    "uid":"u1","kind":{"group":"batch","version":"v1","kind":"Job"},"operation":"CREATE","namespace":"ml",
    "object":{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"template":{"spec":{
    "nodeSelector":{"node.kubernetes.io/instance-type":"ct6e-standard-4t"},
    "containers":[{"name":"t","command":["python3","-m","MaxText.train","base.yml","grain_worker_count=-1"],
    "resources":{"limits":{"google.com/tpu":"4"}}}]}}}}}})";
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::map<std::string, int> answered_by;  // certificate CN -> requests answered 200
  std::vector<std::string> failures;
  std::vector<std::thread> clients;
  for (int i = 0; i < 8; ++i)
    clients.emplace_back([&] {
      while (!stop) {
        HttpsAnswer a = HttpsCall((*webhook)->port(), (*webhook)->ca_pem(), "/mutate", review);
        std::lock_guard<std::mutex> lock(mu);
        if (a.status == 200 && a.body.find("\"patch\"") != std::string::npos) ++answered_by[a.peer_cn];
        else failures.push_back(std::to_string(a.status) + " " + a.error + " " + a.body.substr(0, 200));
      }
    });
  auto served = [&](const std::string& cn, int at_least) {
    return WaitFor([&] {
      std::lock_guard<std::mutex> lock(mu);
      return answered_by[cn] >= at_least;
    }, std::chrono::seconds(60));
  };
  EXPECT_TRUE(served("127.0.0.1", 200));
  for (const std::string cn : {"rotated-1", "rotated-2"}) {
    ASSERT_TRUE((*webhook)->RotateCertificate(cn).ok());
    EXPECT_TRUE(served(cn, 200)) << cn << " never served\n" << (*webhook)->Log();
  }
  stop = true;
  for (std::thread& t : clients) t.join();
  int total = 0;
  for (const auto& [cn, n] : answered_by) total += n;
  std::printf("certificate rotation under load: %d requests answered (", total);
  for (const auto& [cn, n] : answered_by) std::printf(" %s: %d", cn.c_str(), n);
  std::printf(" ), %zu failed\n", failures.size());
  EXPECT_TRUE(failures.empty()) << failures.size() << " failed, first: " << failures.front();
  EXPECT_TRUE((*webhook)->process().Running());
}

}  // namespace
}  // namespace graintune::testing
