// The whole loop on the local control plane with KWOK TPU nodes: an xpk-style Llama3-8B JobSet
// with grain_worker_count=-1 is admitted by graintune-webhook, its pods run (exporter sidecar
// and trainer emulator, on loopback), graintune-operator records attempt 0 as data-bound, the
// attempt fails, JobSet restarts it, and attempt 1 gets the value the trial implies.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <thread>

#include "kube/config.h"
#include "tests/controlplane/https_call.h"
#include "tests/controlplane/operator_under_test.h"
#include "tests/controlplane/pod_runner.h"
#include "tests/controlplane/result_text.h"
#include "tests/controlplane/settled_recommendation.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/controlplane/tpu_nodes.h"
#include "tests/controlplane/wait_for.h"
#include "tests/controlplane/webhook_under_test.h"

namespace graintune::testing {
namespace {

using kube::Json;

// The example JobSet with the elastic iterator (its restarts are re-tuned), made small for this
// machine: a v6e-8 slice (2 hosts), no host network (KWOK gives every host-network pod the same
// address), in namespace `ns`.
std::string SmallJobSet(const std::string& ns, const std::string& name) {
  Result<std::string> text =
      kube::ReadFileText(std::string(GRAINTUNE_EXAMPLES_DIR) + "/llama3-8b-v6e-32-elastic-jobset.yaml");
  std::string y = text.ok() ? *text : "";
  auto replace_all = [&](const std::string& from, const std::string& to) {
    for (size_t p = y.find(from); p != std::string::npos; p = y.find(from, p + to.size()))
      y.replace(p, from.size(), to);
  };
  replace_all("namespace: default", "namespace: " + ns);
  replace_all("llama3-8b-v6e-32-elastic", name);
  replace_all("llama3-8b-v6e-32", name);
  replace_all("topology: 4x8", "topology: 2x4");
  replace_all("parallelism: 8", "parallelism: 2");
  replace_all("completions: 8", "completions: 2");
  replace_all("hostNetwork: true", "hostNetwork: false");
  replace_all("dnsPolicy: ClusterFirstWithHostNet", "dnsPolicy: ClusterFirst");
  return y;
}

class OperatorE2E : public ::testing::Test {
 protected:
  // What a test of the whole loop runs beside the shared control plane.
  struct LoopOptions {
    std::vector<std::string> operators;  // identities of the operator replicas to start
    bool pods_run = true;                // the stand-in kubelet runs the pods (exporter + emulator)
    int steps = PodRunnerOptions{}.steps;  // the trainer emulator's steps
    int* metrics_port = nullptr;         // the first operator's /metrics port, when read
  };

  // The shared control plane with 12 v6e-8 hosts, graintune's webhook, the operator replicas
  // `o` names and, unless told not to, the stand-in kubelet. TearDown stops them, the kubelet
  // first. A caller returns when HasFatalFailure() or IsSkipped().
  void StartLoop(const LoopOptions& o) {
    GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
    cp_ = cp;
    SetUpCluster(*cp);
    if (HasFatalFailure()) return;
    auto webhook = WebhookUnderTest::Start(*cp, {.binary = GRAINTUNE_WEBHOOK_BIN});
    ASSERT_TRUE(webhook.ok()) << webhook.error();
    webhook_ = std::move(*webhook);
    for (size_t i = 0; i < o.operators.size(); ++i) {
      auto op = StartOperator(*cp, o.operators[i], i == 0 ? o.metrics_port : nullptr);
      ASSERT_TRUE(op.ok()) << op.error();
      operators_.push_back(std::move(*op));
    }
    if (!o.pods_run) return;
    runner_ = std::make_unique<PodRunner>(*cp, PodRunnerOptions{.exporter_binary = GRAINTUNE_EXPORTER_BIN,
                                                                .trainer_binary = GRAINTUNE_TRAINER_EMULATOR_BIN,
                                                                .steps = o.steps});
    runner_->Start();
  }

  void TearDown() override {
    if (runner_) runner_->Stop();
    runner_.reset();
    operators_.clear();
    webhook_.reset();
  }

  void SetUpCluster(ControlPlane& cp) {
    static bool nodes = false;
    if (!nodes) {
      for (int i = 0; i < 12; ++i) {
        Result<Json> node = TpuNode({.name = "v6e-8-" + std::to_string(i), .topology = "2x4"});
        ASSERT_TRUE(node.ok());
        auto r = cp.AdminClient()->Create(kube::resources::kNodes, "", *node);
        ASSERT_TRUE(r.ok() || r.error().IsAlreadyExists()) << r.status().message();
      }
      nodes = true;
    }
  }

  // `metrics_port`: where its /metrics is served, when the caller wants to read them.
  Result<ChildProcess> StartOperator(ControlPlane& cp, const std::string& id,
                                     int* metrics_port = nullptr) {
    return StartOperatorUnderTest(cp, GRAINTUNE_OPERATOR_BIN, id, metrics_port);
  }

  static std::optional<Json> Tuning(ControlPlane& cp, const std::string& ns, const std::string& name) {
    auto r = cp.AdminClient()->Get(kube::resources::kGrainTunings, ns, name);
    if (!r.ok()) return std::nullopt;
    return *r;
  }

  static std::vector<Json> Pods(ControlPlane& cp, const std::string& ns, const std::string& jobset,
                                int attempt) {
    kube::ListOptions lo;
    lo.label_selector = "jobset.sigs.k8s.io/jobset-name=" + jobset +
                        ",jobset.sigs.k8s.io/restart-attempt=" + std::to_string(attempt);
    auto r = cp.AdminClient()->List(kube::resources::kPods, ns, lo);
    return r.ok() ? r->items : std::vector<Json>{};
  }

  // Frees the fake TPU hosts for the next test.
  static void DeleteNamespace(ControlPlane& cp, const std::string& ns) {
    cp.Kubectl({"delete", "namespace", ns, "--wait=false"});
  }

  // Creates namespace `ns`, capped at 4 workers by GrainTunePolicy "<ns>-cap" so that attempt 0
  // starts low (data-bound, like the measured 4-worker run); LiftCap raises the cap to 64.
  static Status CreateCappedNamespace(ControlPlane& cp, const std::string& ns) {
    if (Result<std::string> r = cp.Kubectl({"create", "namespace", ns}); !r.ok()) return r.status();
    return cp.Kubectl({"apply", "-f", "-"}, "apiVersion: graintune.dev/v1alpha1\n"
                                             "kind: GrainTunePolicy\n"
                                             "metadata: {name: " + ns + "-cap}\n"
                                             "spec:\n"
                                             "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + ns + "}}\n"
                                             "  maxWorkers: 4\n").status();
  }
  static Status LiftCap(ControlPlane& cp, const std::string& ns) {
    return cp.Kubectl({"patch", "graintunepolicy", ns + "-cap", "--type=merge", "-p",
                       R"({"spec":{"maxWorkers":64}})"}).status();
  }

  // A plain Job on one v6e host with grain_worker_count=-1; created suspended, as Kueue
  // creates it, when `suspended`.
  static std::string SingleHostJob(const std::string& ns, const std::string& name, bool suspended) {
    return "apiVersion: batch/v1\nkind: Job\nmetadata: {name: " + name + ", namespace: " + ns + "}\n" +
           "spec:\n" + (suspended ? "  suspend: true\n" : "") + R"(  backoffLimit: 3
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 2x4}
      tolerations: [{key: google.com/tpu, operator: Exists}]
      containers:
        - name: maxtext
          image: maxtext:latest
          command: [bash, -c, "python3 -m MaxText.train MaxText/configs/base.yml model_name=llama3-8b per_device_batch_size=2 max_target_length=8192 grain_worker_count=-1"]
          resources: {limits: {google.com/tpu: 4}}
)";
  }

  static std::vector<Json> JobPods(ControlPlane& cp, const std::string& ns, const std::string& job) {
    kube::ListOptions lo;
    lo.label_selector = "batch.kubernetes.io/job-name=" + job;
    auto r = cp.AdminClient()->List(kube::resources::kPods, ns, lo);
    return r.ok() ? r->items : std::vector<Json>{};
  }

  // Kueue's admission (false) and preemption (true) of a Job or JobSet, by hand.
  static Status SetSuspended(ControlPlane& cp, const std::string& resource, const std::string& ns,
                             const std::string& name, bool suspended) {
    return cp.Kubectl({"patch", resource, name, "-n", ns, "--type=merge", "-p",
                       std::string(R"({"spec":{"suspend":)") + (suspended ? "true" : "false") + "}}"})
        .status();
  }

  // A GrainTuning's status, or an empty object before the operator has written one (a fresh
  // GrainTuning has none; operator[] on it would insert a null and value() would throw).
  static Json StatusOf(const Json& tuning) { return tuning.value("status", Json::object()); }

  // The GrainTuning's status, or an empty object while there is none.
  static Json TuningStatus(ControlPlane& cp, const std::string& ns, const std::string& name) {
    std::optional<Json> gt = Tuning(cp, ns, name);
    return gt ? StatusOf(*gt) : Json::object();
  }

  static int WorkersOf(const Json& pod) {
    return std::stoi(pod["metadata"]["annotations"].value("graintune.dev/worker-count", "0"));
  }

  // The recommendation for attempt 1 once attempt 0's trial has settled, or 0 when it does not
  // within a minute.
  static int SettledRecommendationFor1(ControlPlane& cp, const std::string& ns, const std::string& name) {
    SettledRecommendation for_attempt_1(1);
    const bool settled = WaitFor([&] { return for_attempt_1.Settled(TuningStatus(cp, ns, name)); },
                                 std::chrono::seconds(60));
    return settled ? for_attempt_1.workers() : 0;
  }

  ControlPlane* cp_ = nullptr;
  std::unique_ptr<WebhookUnderTest> webhook_;
  std::vector<ChildProcess> operators_;
  std::unique_ptr<PodRunner> runner_;
};

TEST_F(OperatorE2E, DataBoundAttemptIsRestartedWithTheValueItsTrialImplies) {
  // Two operator replicas: one leads.
  StartLoop({.operators = {"op-a", "op-b"}});
  if (HasFatalFailure() || IsSkipped()) return;
  ControlPlane* const cp = cp_;

  const std::string ns = "tune";
  // Attempt 0 starts deliberately low: the platform caps this namespace at 4 workers.
  ASSERT_TRUE(CreateCappedNamespace(*cp, ns).ok());
  Result<std::string> applied = cp->Kubectl({"apply", "-f", "-"}, SmallJobSet(ns, "llama"));
  ASSERT_TRUE(applied.ok()) << applied.error();

  // Attempt 0: two pods with 4 workers each, running exporter + emulator.
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "llama", 0).size() == 2 &&
                                   runner_->Started().size() >= 2; },
                      std::chrono::seconds(60)))
      << Text(cp->Kubectl({"get", "pods", "-A", "-o", "wide"}));
  for (const Json& p : Pods(*cp, ns, "llama", 0)) EXPECT_EQ(WorkersOf(p), 4);

  // The operator records a data-bound trial for attempt 0.
  ASSERT_TRUE(WaitFor([&] {
    auto gt = Tuning(*cp, ns, "llama");
    return gt && (*gt)["status"].contains("trials") &&
           (*gt)["status"]["trials"][0].value("dataBound", false);
  }, std::chrono::seconds(90))) << Text(cp->Kubectl({"get", "graintunings", "-A", "-o", "yaml"}))
                                 << TailOfFile(cp->dir() + "/operator-op-a.log")
                                 << TailOfFile(cp->dir() + "/operator-op-b.log");
  EXPECT_EQ((*Tuning(*cp, ns, "llama"))["spec"].value("policyName", ""), "tune-cap");
  // Both operator replicas die; a new one starts from what is in the API and loses nothing.
  const int samples_before = (*Tuning(*cp, ns, "llama"))["status"]["trials"][0]["samples"];
  for (ChildProcess& op : operators_) op.Kill();
  auto op_c = StartOperator(*cp, "op-c");
  ASSERT_TRUE(op_c.ok());
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_GE((*Tuning(*cp, ns, "llama"))["status"]["trials"][0]["samples"].get<int>(), samples_before);
  EXPECT_TRUE((*Tuning(*cp, ns, "llama"))["status"]["trials"][0].value("dataBound", false));

  // The platform lifts the cap; the operator re-decides for attempt 1.
  ASSERT_TRUE(LiftCap(*cp, ns).ok());
  int next = 0;
  ASSERT_TRUE(WaitFor([&] {
    auto gt = Tuning(*cp, ns, "llama");
    if (!gt) return false;
    const Json rec = StatusOf(*gt).value("recommendation", Json::object());
    next = rec.value("workers", 0);
    return rec.value("attempt", 0) == 1 && next > 4;
  }, std::chrono::seconds(30))) << Text(cp->Kubectl({"get", "graintunings", "-n", ns, "-o", "yaml"}));
  EXPECT_GE(next, 8) << "a jump to what the measurement implies, not +1";
  // Attempt 0 is still running: the value for attempt 1 is read once its trial has settled.
  next = SettledRecommendationFor1(*cp, ns, "llama");
  ASSERT_GT(next, 0) << Text(cp->Kubectl({"get", "graintunings", "-n", ns, "-o", "yaml"}));
  EXPECT_GE(next, 8);

  // Attempt 0 fails; JobSet restarts it; attempt 1's pods get the recommended value.
  for (const Json& p : Pods(*cp, ns, "llama", 0))
    ASSERT_TRUE(cp->Kubectl({"annotate", "pod", "-n", ns, p["metadata"]["name"],
                             "graintune.dev/test-terminate=Error"}).ok());
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "llama", 1).size() == 2; }, std::chrono::seconds(60)))
      << Text(cp->Kubectl({"get", "jobset,jobs,pods", "-n", ns}));
  for (const Json& p : Pods(*cp, ns, "llama", 1)) EXPECT_EQ(WorkersOf(p), next);

  // Attempt 1 is fed: its throughput is the demand, measured. The recommendation for attempt 2
  // is the fewest workers that measured demand calls for: attempt 1's count, or a trim of it.
  int trimmed = 0;
  ASSERT_TRUE(WaitFor([&] {
    auto gt = Tuning(*cp, ns, "llama");
    if (!gt || StatusOf(*gt).value("trials", Json::array()).size() != 2) return false;
    const Json rec = StatusOf(*gt).value("recommendation", Json::object());
    trimmed = rec.value("workers", 0);
    return rec.value("attempt", 0) == 2;
  }, std::chrono::seconds(90))) << Text(cp->Kubectl({"get", "graintunings", "-n", ns, "-o", "yaml"}));
  auto gt = Tuning(*cp, ns, "llama");
  EXPECT_FALSE((*gt)["status"]["trials"][1].value("dataBound", true));
  EXPECT_EQ((*gt)["status"]["trials"][1]["workers"], next);
  EXPECT_LE(trimmed, next);
  if (trimmed < next) {
    // Attempt 1 ends; attempt 2 runs the trimmed value, is fed too, and the tuning converges.
    EXPECT_NE((*gt)["status"]["recommendation"].value("reason", "").find("measured demand"),
              std::string::npos);
    for (const Json& p : Pods(*cp, ns, "llama", 1))
      ASSERT_TRUE(cp->Kubectl({"annotate", "pod", "-n", ns, p["metadata"]["name"],
                               "graintune.dev/test-terminate=Error"}).ok());
    ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "llama", 2).size() == 2; }, std::chrono::seconds(60)))
        << Text(cp->Kubectl({"get", "jobset,jobs,pods", "-n", ns}));
    // Attempt 1's last scrapes may still refine the trim: the pods carry its final value.
    const std::vector<Json> attempt2 = Pods(*cp, ns, "llama", 2);
    trimmed = WorkersOf(attempt2[0]);
    for (const Json& p : attempt2) EXPECT_EQ(WorkersOf(p), trimmed);
    EXPECT_LT(trimmed, next);
  }
  const size_t trials = trimmed < next ? 3 : 2;
  ASSERT_TRUE(WaitFor([&] {
    gt = Tuning(*cp, ns, "llama");
    return gt && StatusOf(*gt).value("phase", "") == "Converged" &&
           StatusOf(*gt).value("trials", Json::array()).size() == trials;
  }, std::chrono::seconds(90))) << Text(cp->Kubectl({"get", "graintunings", "-n", ns, "-o", "yaml"}));
  std::printf("attempt 1 ran %d workers; converged on %d\n", next,
              (*gt)["status"]["recommendation"].value("workers", 0));

  const std::string table = Text(cp->Kubectl({"get", "graintunings", "-n", ns}));
  std::printf("\n$ kubectl get graintunings -n %s\n%s\n", ns.c_str(), table.c_str());
  EXPECT_NE(table.find("Converged"), std::string::npos);
  const std::string events = Text(cp->Kubectl({"get", "events", "-n", ns,
                                               "--field-selector", "involvedObject.kind=JobSet"}));
  std::printf("%s\n", events.c_str());
  EXPECT_NE(events.find("RecommendationChanged"), std::string::npos) << events;
  EXPECT_NE(events.find("Converged"), std::string::npos) << events;
  EXPECT_GT(StatusOf(*gt).value("learnedTokensPerSecondPerWorker", 0.0), 1000.0);
  EXPECT_EQ((*gt)["spec"].value("dataset", ""), "c4-en-raw");

  // A later workload on the same dataset starts from what was learned, not the default.
  Result<std::string> second = cp->Kubectl({"apply", "-f", "-"}, SmallJobSet(ns, "llama-again"));
  ASSERT_TRUE(second.ok()) << second.error();
  auto js = cp->AdminClient()->Get(kube::resources::kJobSets, ns, "llama-again");
  ASSERT_TRUE(js.ok());
  const std::string reason = (*js)["metadata"]["annotations"].value("graintune.dev/reason", "");
  EXPECT_NE(reason.find("learned by GrainTuning tune/llama"), std::string::npos) << reason;
  // It trains the same step on the same hosts (another run name only): the first workload's
  // fed throughput is its demand, not a FLOPs estimate.
  EXPECT_NE(StatusOf(*gt).value("learned", Json::object()).value("demandKey", ""), "");
  EXPECT_NE(reason.find("fed throughput measured by GrainTuning tune/llama"), std::string::npos) << reason;
  std::printf("second workload on c4-en-raw: %s\n", reason.c_str());
  DeleteNamespace(*cp, ns);
}

TEST_F(OperatorE2E, APlainJobsPodRetryGetsTheNextValue) {
  StartLoop({.operators = {"op-retry"}});
  if (HasFatalFailure() || IsSkipped()) return;
  ControlPlane* const cp = cp_;
  const std::string ns = "retry";
  ASSERT_TRUE(CreateCappedNamespace(*cp, ns).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, SingleHostJob(ns, "single-host", false)).ok());
  auto job_pods = [&] { return JobPods(*cp, ns, "single-host"); };
  ASSERT_TRUE(WaitFor([&] { return job_pods().size() == 1; }, std::chrono::seconds(60)));
  const Json first = job_pods()[0];
  EXPECT_EQ(WorkersOf(first), 4);
  ASSERT_TRUE(WaitFor([&] { return TuningStatus(*cp, ns, "single-host").contains("trials"); },
                      std::chrono::seconds(90)))
      << Text(cp->Kubectl({"get", "graintunings,pods", "-n", ns}));
  ASSERT_TRUE(LiftCap(*cp, ns).ok());
  int next = 0;
  ASSERT_TRUE(WaitFor([&] {
    next = TuningStatus(*cp, ns, "single-host").value("recommendation", Json::object()).value("workers", 0);
    return next > 4;
  }, std::chrono::seconds(30)));
  next = SettledRecommendationFor1(*cp, ns, "single-host");
  ASSERT_GT(next, 4) << Text(cp->Kubectl({"get", "graintunings", "-n", ns, "-o", "yaml"}));
  // The pod fails; the Job controller retries it; the retry is attempt 1 and gets the new value.
  ASSERT_TRUE(cp->Kubectl({"annotate", "pod", "-n", ns, first["metadata"]["name"],
                           "graintune.dev/test-terminate=Error"}).ok());
  Json retry;
  ASSERT_TRUE(WaitFor([&] {
    for (const Json& p : job_pods())
      if (p["metadata"]["name"] != first["metadata"]["name"]) retry = p;
    return !retry.is_null();
  }, std::chrono::seconds(90))) << Text(cp->Kubectl({"describe", "job", "-n", ns, "single-host"}));
  EXPECT_EQ(WorkersOf(retry), next);
  EXPECT_EQ(retry["metadata"]["annotations"].value("graintune.dev/attempt", ""), "1");
  DeleteNamespace(*cp, ns);
}

// Kueue's admission and preemption, done by hand: the Job is created suspended, admitted
// (suspend=false), preempted (suspend=true: the Job controller deletes its pods, nothing
// fails) and re-admitted. The re-admitted pods come from the same template, naming attempt 0,
// but attempt 0 was measured and ended, so they are attempt 1 with the value its trial implies.
TEST_F(OperatorE2E, AKueueStyleReadmissionIsTheNextAttempt) {
  StartLoop({.operators = {"op-resume"}});
  if (HasFatalFailure() || IsSkipped()) return;
  ControlPlane* const cp = cp_;
  const std::string ns = "resume";
  ASSERT_TRUE(CreateCappedNamespace(*cp, ns).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, SingleHostJob(ns, "queued", true)).ok());
  auto job_pods = [&] { return JobPods(*cp, ns, "queued"); };
  auto set_suspend = [&](bool suspended) { return SetSuspended(*cp, "job", ns, "queued", suspended); };
  auto tuning_status = [&] { return TuningStatus(*cp, ns, "queued"); };

  ASSERT_TRUE(set_suspend(false).ok());  // admitted
  ASSERT_TRUE(WaitFor([&] { return job_pods().size() == 1; }, std::chrono::seconds(60)));
  const Json first = job_pods()[0];
  EXPECT_EQ(WorkersOf(first), 4);
  ASSERT_TRUE(WaitFor([&] { return tuning_status().contains("trials"); }, std::chrono::seconds(90)))
      << Text(cp->Kubectl({"get", "graintunings,pods", "-n", ns}));
  ASSERT_TRUE(LiftCap(*cp, ns).ok());
  int next = 0;
  ASSERT_TRUE(WaitFor([&] {
    const Json rec = tuning_status().value("recommendation", Json::object());
    next = rec.value("attempt", 0) == 1 ? rec.value("workers", 0) : 0;
    return next > 4;
  }, std::chrono::seconds(30)));

  ASSERT_TRUE(set_suspend(true).ok());  // preempted: the pod is deleted, not failed
  ASSERT_TRUE(WaitFor([&] { return job_pods().empty(); }, std::chrono::seconds(60)));
  ASSERT_TRUE(WaitFor([&] { return tuning_status().value("endedAttempts", Json::array()) == Json({0}); },
                      std::chrono::seconds(30)))
      << tuning_status().dump();
  // Attempt 0's trial was refined by every scrape until its pod went: the re-admitted pod gets
  // the recommendation as it stands now.
  next = tuning_status()["recommendation"].value("workers", 0);
  EXPECT_GT(next, 4);
  ASSERT_TRUE(set_suspend(false).ok());  // re-admitted
  ASSERT_TRUE(WaitFor([&] { return job_pods().size() == 1; }, std::chrono::seconds(60)));
  const Json resumed = job_pods()[0];
  EXPECT_NE(resumed["metadata"]["name"], first["metadata"]["name"]);
  EXPECT_EQ(WorkersOf(resumed), next);
  EXPECT_EQ(resumed["metadata"]["annotations"].value("graintune.dev/attempt", ""), "1");
  const std::string reason = resumed["metadata"]["annotations"].value("graintune.dev/reason", "");
  EXPECT_EQ(reason.rfind("its attempt 0 had ended, so this is a new run or a re-admission; the workload's history (status.trials) files it as attempt 1.", 0), 0u) << reason;
  std::printf("re-admitted pod: %d workers: %s\n", WorkersOf(resumed), reason.c_str());
  // The operator files the new run under attempt 1.
  ASSERT_TRUE(WaitFor([&] {
    const Json trials = tuning_status().value("trials", Json::array());
    return trials.size() == 2 && trials[1].value("attempt", -1) == 1 && trials[1].value("workers", 0) == next;
  }, std::chrono::seconds(90))) << tuning_status().dump();
  DeleteNamespace(*cp, ns);
}

// The same for the xpk shape: Kueue suspends and resumes the JobSet; the JobSet controller
// suspends its child Jobs (their pods are deleted) and resumes them, restart-attempt label
// unchanged. The resumed pods are attempt 1 with the implied value.
TEST_F(OperatorE2E, AKueueStyleReadmissionOfAJobSetIsTheNextAttempt) {
  StartLoop({.operators = {"op-resume-js"}});
  if (HasFatalFailure() || IsSkipped()) return;
  ControlPlane* const cp = cp_;
  const std::string ns = "resume-js";
  ASSERT_TRUE(CreateCappedNamespace(*cp, ns).ok());
  std::string jobset = SmallJobSet(ns, "queued");
  jobset.replace(jobset.find("\nspec:\n"), 7, "\nspec:\n  suspend: true\n");
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, jobset).ok());
  auto set_suspend = [&](bool suspended) { return SetSuspended(*cp, "jobset", ns, "queued", suspended); };
  auto tuning_status = [&] { return TuningStatus(*cp, ns, "queued"); };

  ASSERT_TRUE(set_suspend(false).ok());  // admitted
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "queued", 0).size() == 2; }, std::chrono::seconds(60)))
      << Text(cp->Kubectl({"get", "jobsets,jobs,pods", "-n", ns}));
  std::set<std::string> first_names;
  for (const Json& p : Pods(*cp, ns, "queued", 0)) {
    EXPECT_EQ(WorkersOf(p), 4);
    first_names.insert(p["metadata"]["name"].get<std::string>());
  }
  ASSERT_TRUE(WaitFor([&] { return tuning_status().contains("trials"); }, std::chrono::seconds(90)))
      << Text(cp->Kubectl({"get", "graintunings,pods", "-n", ns}));
  ASSERT_TRUE(LiftCap(*cp, ns).ok());
  int next = 0;
  ASSERT_TRUE(WaitFor([&] {
    const Json rec = tuning_status().value("recommendation", Json::object());
    next = rec.value("attempt", 0) == 1 ? rec.value("workers", 0) : 0;
    return next > 4;
  }, std::chrono::seconds(30)));

  ASSERT_TRUE(set_suspend(true).ok());  // preempted
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "queued", 0).empty(); }, std::chrono::seconds(60)))
      << Text(cp->Kubectl({"get", "jobsets,jobs,pods", "-n", ns}));
  ASSERT_TRUE(WaitFor([&] { return tuning_status().value("endedAttempts", Json::array()) == Json({0}); },
                      std::chrono::seconds(30)))
      << tuning_status().dump();
  // Attempt 0's trial was refined by every scrape until its pods went (seen: 15, then 17): the
  // re-admitted pods get the recommendation as it stands now.
  next = tuning_status()["recommendation"].value("workers", 0);
  EXPECT_GT(next, 4);
  ASSERT_TRUE(set_suspend(false).ok());  // re-admitted
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "queued", 0).size() == 2; }, std::chrono::seconds(60)))
      << Text(cp->Kubectl({"get", "jobsets,jobs,pods", "-n", ns}));
  for (const Json& p : Pods(*cp, ns, "queued", 0)) {
    EXPECT_FALSE(first_names.count(p["metadata"]["name"].get<std::string>()));
    EXPECT_EQ(WorkersOf(p), next);
    EXPECT_EQ(p["metadata"]["annotations"].value("graintune.dev/attempt", ""), "1");
  }
  ASSERT_TRUE(WaitFor([&] {
    const Json trials = tuning_status().value("trials", Json::array());
    return trials.size() == 2 && trials[1].value("attempt", -1) == 1 && trials[1].value("workers", 0) == next;
  }, std::chrono::seconds(90))) << tuning_status().dump();
  DeleteNamespace(*cp, ns);
}

// --forget-after: a GrainTuning whose workload left no pods and that saw no activity for that
// long is deleted; one whose workload still has a pod stays, however old.
TEST_F(OperatorE2E, IdleGrainTuningsWithoutPodsAreForgotten) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
  const std::string ns = "forget";
  ASSERT_TRUE(cp->Kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, R"(
apiVersion: graintune.dev/v1alpha1
kind: GrainTuning
metadata: {name: gone, namespace: forget}
spec: {tuningKey: gone}
---
apiVersion: graintune.dev/v1alpha1
kind: GrainTuning
metadata: {name: running, namespace: forget}
spec: {tuningKey: running}
---
apiVersion: v1
kind: Pod
metadata:
  name: running-0
  namespace: forget
  labels: {graintune.dev/managed: "true"}
  annotations: {graintune.dev/tuning-key: running, graintune.dev/worker-count: "4"}
spec:
  containers: [{name: maxtext, image: maxtext:latest, args: [grain_worker_count=4]}]
)").ok());
  const std::string running_uid = (*Tuning(*cp, ns, "running"))["metadata"]["uid"];
  auto op = ChildProcess::Spawn({GRAINTUNE_OPERATOR_BIN, "--kubeconfig", cp->kubeconfig_path(),
                                 "--identity", "op-forget", "--leader-elect=false",
                                 "--resync-period-ms", "500", "--forget-after", "2s",
                                 "--bind-address", "127.0.0.1", "--port", std::to_string(*FreeLoopbackPort())},
                                cp->dir() + "/operator-op-forget.log");
  ASSERT_TRUE(op.ok()) << op.error();
  ASSERT_TRUE(WaitFor([&] { return !Tuning(*cp, ns, "gone"); }, std::chrono::seconds(30)))
      << TailOfFile(cp->dir() + "/operator-op-forget.log");
  // Several passes later, the same object (the operator would recreate a deleted one for the pod).
  std::this_thread::sleep_for(std::chrono::seconds(3));
  std::optional<Json> running = Tuning(*cp, ns, "running");
  ASSERT_TRUE(running);
  EXPECT_EQ((*running)["metadata"]["uid"], running_uid) << "a GrainTuning whose workload has a pod was deleted";
  EXPECT_NE(TailOfFile(cp->dir() + "/operator-op-forget.log").find("forgot GrainTuning forget/gone"),
            std::string::npos);
  DeleteNamespace(*cp, ns);
}

TEST_F(OperatorE2E, AnOomKilledAttemptCapsTheNextOne) {
  StartLoop({.operators = {"op-oom"}, .pods_run = false});
  if (HasFatalFailure() || IsSkipped()) return;
  ControlPlane* const cp = cp_;
  const std::string ns = "oom";
  ASSERT_TRUE(cp->Kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, SmallJobSet(ns, "oomy")).ok());
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "oomy", 0).size() == 2; }, std::chrono::seconds(60)));
  const int first = WorkersOf(Pods(*cp, ns, "oomy", 0)[0]);
  ASSERT_GT(first, 1);
  // The kernel kills one host's trainer for memory.
  ASSERT_TRUE(cp->Kubectl({"annotate", "pod", "-n", ns, Pods(*cp, ns, "oomy", 0)[0]["metadata"]["name"],
                           "graintune.dev/test-terminate=OOMKilled"}).ok());
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "oomy", 1).size() == 2; }, std::chrono::seconds(60)))
      << Text(cp->Kubectl({"get", "graintunings,jobset,pods", "-n", ns, "-o", "wide"}));
  for (const Json& p : Pods(*cp, ns, "oomy", 1)) EXPECT_LT(WorkersOf(p), first);
  auto gt = Tuning(*cp, ns, "oomy");
  ASSERT_TRUE(gt);
  EXPECT_TRUE((*gt)["status"]["trials"][0].value("oomKilled", false));
  bool capped = false;
  for (const Json& c : (*gt)["status"]["conditions"])
    capped |= c["type"] == "CappedByOOM" && c["status"] == "True";
  EXPECT_TRUE(capped);
  const std::string events = Text(cp->Kubectl({"get", "events", "-n", ns}));
  EXPECT_NE(events.find("CappedByOOM"), std::string::npos) << events;
  DeleteNamespace(*cp, ns);
}

TEST_F(OperatorE2E, OffNeverMutatesAndInitialKeepsTheFirstValue) {
  StartLoop({.operators = {"op-modes"}});
  if (HasFatalFailure() || IsSkipped()) return;
  ControlPlane* const cp = cp_;
  for (const std::string ns : {"modes-off", "modes-initial"})
    ASSERT_TRUE(cp->Kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, R"(
apiVersion: graintune.dev/v1alpha1
kind: GrainTunePolicy
metadata: {name: modes-off}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: modes-off}}
  mode: "Off"
---
apiVersion: graintune.dev/v1alpha1
kind: GrainTunePolicy
metadata: {name: modes-initial}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: modes-initial}}
  mode: Initial
  maxWorkers: 4
)").ok());
  // Off: recommend only. kubectl shows what graintune would do; nothing is changed.
  Result<std::string> off = cp->Kubectl({"apply", "-f", "-"}, SmallJobSet("modes-off", "mode-off"));
  ASSERT_TRUE(off.ok()) << off.error();
  EXPECT_NE(off->find("policy mode Off: would set grain_worker_count="), std::string::npos) << *off;
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, "modes-off", "mode-off", 0).size() == 2; }, std::chrono::seconds(60)));
  for (const Json& p : Pods(*cp, "modes-off", "mode-off", 0)) {
    EXPECT_NE(p["spec"]["containers"][0]["command"].back().get<std::string>().find("grain_worker_count=-1"),
              std::string::npos);
    EXPECT_FALSE(p["spec"].contains("initContainers"));
    EXPECT_FALSE(p["metadata"].value("labels", Json::object()).contains("graintune.dev/managed"));
  }

  // Initial: attempt 0 is set (capped at 4 here) and measured; even when the cap is lifted and
  // the operator would recommend more, the restart keeps the first value.
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, SmallJobSet("modes-initial", "mode-initial")).ok());
  ASSERT_TRUE(WaitFor([&] {
    auto gt = Tuning(*cp, "modes-initial", "mode-initial");
    return gt && (*gt)["status"].contains("trials");
  }, std::chrono::seconds(90))) << Text(cp->Kubectl({"get", "graintunings,pods", "-n", "modes-initial"}));
  ASSERT_TRUE(cp->Kubectl({"patch", "graintunepolicy", "modes-initial", "--type=merge", "-p",
                           R"({"spec":{"maxWorkers":64}})"}).ok());
  ASSERT_TRUE(WaitFor([&] {
    auto gt = Tuning(*cp, "modes-initial", "mode-initial");
    return gt && gt->value("/status/recommendation/workers"_json_pointer, 0) > 4;
  }, std::chrono::seconds(30)));
  for (const Json& p : Pods(*cp, "modes-initial", "mode-initial", 0))
    ASSERT_TRUE(cp->Kubectl({"annotate", "pod", "-n", "modes-initial", p["metadata"]["name"],
                             "graintune.dev/test-terminate=Error"}).ok());
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, "modes-initial", "mode-initial", 1).size() == 2; },
                      std::chrono::seconds(60)));
  for (const Json& p : Pods(*cp, "modes-initial", "mode-initial", 1)) EXPECT_EQ(WorkersOf(p), 4);
  DeleteNamespace(*cp, "modes-off");
  DeleteNamespace(*cp, "modes-initial");
}

// The webhook is down when a JobSet restarts: the restart's pods start with the value graintune
// gave the first attempt (the JobSet's template holds it) and with the exporter, never with -1,
// which MaxText would hand to Grain's own pick (179 workers on a v6e host).
TEST_F(OperatorE2E, WithTheWebhookDownARestartStartsWithTheFirstAttemptsValue) {
  StartLoop({.pods_run = false});
  if (HasFatalFailure() || IsSkipped()) return;
  ControlPlane* const cp = cp_;
  const std::string ns = "fallback";
  ASSERT_TRUE(cp->Kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, SmallJobSet(ns, "fb")).ok());
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "fb", 0).size() == 2; }, std::chrono::seconds(60)))
      << Text(cp->Kubectl({"get", "jobsets,jobs,pods", "-n", ns}));
  const int first = WorkersOf(Pods(*cp, ns, "fb", 0)[0]);
  ASSERT_GT(first, 0);

  webhook_->process().Stop();  // its registration stays: the API server now fails open
  ASSERT_FALSE(webhook_->process().Running());
  for (const Json& p : Pods(*cp, ns, "fb", 0))
    ASSERT_TRUE(cp->Kubectl({"annotate", "pod", "-n", ns, p["metadata"]["name"],
                             "graintune.dev/test-terminate=Error"}).ok());
  ASSERT_TRUE(WaitFor([&] { return Pods(*cp, ns, "fb", 1).size() == 2; }, std::chrono::seconds(90)))
      << Text(cp->Kubectl({"get", "jobsets,jobs,pods", "-n", ns}));
  for (const Json& p : Pods(*cp, ns, "fb", 1)) {
    const std::string script = p["spec"]["containers"][0]["command"].back();
    EXPECT_NE(script.find("grain_worker_count=" + std::to_string(first) + " "), std::string::npos) << script;
    EXPECT_EQ(script.find("grain_worker_count=-1"), std::string::npos) << script;
    EXPECT_EQ(WorkersOf(p), first);
    // The template's exporter and the start check's launcher came with it.
    ASSERT_TRUE(p["spec"].contains("initContainers")) << p["spec"].dump();
    std::set<std::string> init;
    for (const Json& c : p["spec"]["initContainers"]) init.insert(c.value("name", ""));
    EXPECT_EQ(init, (std::set<std::string>{"graintune-exporter", "graintune-launcher-install"}));
  }
  std::printf("attempt 1, created with the webhook down, started with grain_worker_count=%d\n", first);
  DeleteNamespace(*cp, ns);
}

// Faults while a trial is being recorded: the API server restarted, etcd stopped and restarted,
// the operator SIGKILLed mid-reconcile three times. Nothing recorded is lost (the trial's
// sample count never goes back), recording resumes after each fault, and the webhook, whose
// caches watched through all of it, still tunes a new Job.
TEST_F(OperatorE2E, ApiServerEtcdAndOperatorFaultsLoseNothing) {
  int metrics_port = 0;
  // A long attempt: 3,000 steps at the emulator's pace, recorded while the faults happen.
  StartLoop({.operators = {"op-fault-0"}, .steps = 3000, .metrics_port = &metrics_port});
  if (HasFatalFailure() || IsSkipped()) return;
  ControlPlane* const cp = cp_;
  ChildProcess* op = &operators_[0];
  const std::string ns = "faults";
  ASSERT_TRUE(cp->Kubectl({"create", "namespace", ns}).ok());
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, SingleHostJob(ns, "long", false)).ok());

  // The trial's samples, checked never to go back between any two reads.
  int highest = 0;
  auto samples = [&] {
    auto gt = Tuning(*cp, ns, "long");
    if (!gt) return highest;
    const Json trials = StatusOf(*gt).value("trials", Json::array());
    const int now = trials.empty() ? 0 : trials[0].value("samples", 0);
    EXPECT_GE(now, highest) << "a recorded sample was lost";
    highest = std::max(highest, now);
    return now;
  };
  auto grows = [&](const char* after) {
    const int from = samples();
    EXPECT_TRUE(WaitFor([&] { return samples() > from; }, std::chrono::seconds(90)))
        << "recording did not resume after " << after << " (" << from << " samples)\n"
        << TailOfFile(op->log_path());
  };
  ASSERT_TRUE(WaitFor([&] { return samples() >= 3; }, std::chrono::seconds(90)))
      << Text(cp->Kubectl({"get", "graintunings,pods", "-n", ns, "-o", "wide"}))
      << TailOfFile(op->log_path());

  // The API server restarts while the operator writes status.
  ASSERT_TRUE(cp->RestartApiServer().ok());
  grows("an API server restart");

  // etcd stops: the API server answers errors, then etcd comes back on its data. The operator
  // meets the outage one of two ways, whichever comes first: a status write fails (counted as
  // a reconcile error), or its Lease renewal fails within the renew deadline (3 s here) and it
  // stops leading, cancelling what was in flight. Status is written when a scrape brings new
  // steps (every 5 s), so either can come first.
  auto metric = [&](const std::string& key) {
    HttpsAnswer m = HttpsCall(metrics_port, "", "/metrics");
    const size_t at = m.body.find("\n" + key + " ");
    return at == std::string::npos ? -1.0 : std::stod(m.body.substr(at + key.size() + 2));
  };
  const std::string reconcile_error = "graintune_operator_total{kind=\"reconcile_error\"}";
  const double errors_before = std::max(0.0, metric(reconcile_error));
  ASSERT_TRUE(cp->StopEtcd().ok());
  EXPECT_TRUE(WaitFor([&] { return metric(reconcile_error) > errors_before || metric("graintune_operator_leader") == 0; },
                      std::chrono::seconds(60)))
      << "the operator never met the outage\n" << TailOfFile(op->log_path());
  ASSERT_TRUE(cp->ResumeEtcd().ok());
  grows("etcd's restart");

  // The operator dies mid-reconcile (SIGKILL: no lease release, no last write) three times;
  // each successor waits out the lease and carries on from what is in the API.
  for (int i = 1; i <= 3; ++i) {
    op->Kill();
    auto next = StartOperator(*cp, "op-fault-" + std::to_string(i));
    ASSERT_TRUE(next.ok()) << next.error();
    *op = std::move(*next);
    grows("an operator SIGKILL");
  }
  EXPECT_TRUE(op->Running());
  ASSERT_TRUE(webhook_->process().Running()) << webhook_->Log();

  // The webhook's caches followed the API server through the restarts: a new Job is tuned.
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, SingleHostJob(ns, "after-faults", true)).ok());
  auto job = cp->AdminClient()->Get(kube::resources::kJobs, ns, "after-faults");
  ASSERT_TRUE(job.ok());
  EXPECT_FALSE((*job)["metadata"]["annotations"].value("graintune.dev/worker-count", "").empty())
      << (*job)["metadata"].dump() << "\n" << webhook_->Log();
  std::printf("trial samples recorded through the faults: %d\n", highest);
  DeleteNamespace(*cp, ns);
}

}  // namespace
}  // namespace graintune::testing
