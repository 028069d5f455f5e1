// The controller's I/O shell against the fake API server: what it writes, when it retries,
// when it leaves a key alone, and that a slow exporter delays no other key. Keys reach it
// through the informers' events (KeyEvents) and its work queue, on a fake clock.
#include "operator/tuning_controller.h"
#include "workload/cluster_sources.h"

#include <gtest/gtest.h>

#include <set>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "base/fake_clock.h"
#include "kube/fake_api_server.h"
#include "workload/graintune_objects.h"

namespace graintune::op {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr char kGrainTunings[] = "/apis/graintune.dev/v1alpha1/namespaces/team-a/graintunings";

json ManagedPod(const std::string& phase) {
  return json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "llama-0", "namespace": "team-a",
                 "labels": {"graintune.dev/managed": "true", "batch.kubernetes.io/job-name": "llama"},
                 "annotations": {"graintune.dev/worker-count": "4", "graintune.dev/attempt": "0"}},
    "spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "ct6e-standard-4t"},
             "containers": [{"name": "jax-tpu",
               "command": ["python3", "-m", "MaxText.train", "grain_worker_count=4"],
               "resources": {"limits": {"google.com/tpu": 4}}}]},
    "status": {"phase": ")" + phase + R"("}})");
}

class TuningControllerTest : public ::testing::Test {
 protected:
  void StartWith(const json& pod) {
    api_->Put(kube::resources::kPods, pod);
    kube::InformerOptions managed;
    managed.label_selector = "graintune.dev/managed=true";
    caches_.pods = std::make_shared<kube::Informer>(client_, kube::resources::kPods, managed,
                                                    keys_->ForPods());
    caches_.graintunings = std::make_shared<kube::Informer>(
        client_, kube::resources::kGrainTunings, kube::InformerOptions{}, keys_->ForGrainTunings());
    caches_.policies = std::make_shared<kube::Informer>(
        client_, kube::resources::kGrainTunePolicies, kube::InformerOptions{}, keys_->ForSelectionChanges());
    caches_.namespaces = std::make_shared<kube::Informer>(
        client_, kube::resources::kNamespaces, kube::InformerOptions{}, keys_->ForSelectionChanges());
    caches_.nodes = workload::MakeTpuNodeCache(client_);
    caches_.configmaps = std::make_shared<workload::ConfigMapFetcher>(workload::FetchConfigMapData(client_));
    caches_.Start();
    for (auto* i : {&caches_.pods, &caches_.graintunings, &caches_.policies, &caches_.namespaces,
                    &caches_.nodes.informer})
      ASSERT_TRUE((*i)->WaitForSync(10s));
    ControllerOptions options;
    options.clock = &clock_;
    options.running_requeue = 5s;
    options.fetch = fetch_;
    controller_ = std::make_unique<TuningController>(
        client_, caches_, std::make_shared<kube::EventRecorder>(client_, "graintune.dev/operator", "test"),
        keys_, options);
    // The pods' add events have reached the queue (the informer is synced once its handlers ran).
    WaitFor([&] { return keys_->handled() >= 1 && controller_->queue_depth().ready > 0; });
  }
  void Advance(std::chrono::steady_clock::duration d) { clock_.Advance(d); }
  void TearDown() override { caches_.Stop(); }

  // Changes the pod in the API and waits until the controller's cache holds the change.
  void TouchPod() {
    json pod = *api_->Get(kube::resources::kPods, "team-a", "llama-0");
    pod["metadata"]["annotations"]["touched"] = "yes";
    const std::string version = api_->Put(kube::resources::kPods, pod)["metadata"]["resourceVersion"];
    WaitFor([&] {
      std::optional<json> cached = caches_.pods->Get("team-a", "llama-0");
      return cached && (*cached)["metadata"]["resourceVersion"] == version &&
             controller_->queue_depth().ready > 0;
    });
  }
  static void WaitFor(const std::function<bool()>& condition) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!condition()) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "condition not met in 10 s";
      std::this_thread::yield();
    }
  }
  std::optional<json> StoredTuning() const {
    return api_->Get(kube::resources::kGrainTunings, "team-a", workload::GrainTuningName("llama"));
  }

  std::shared_ptr<kube::FakeApiServer> api_ = std::make_shared<kube::FakeApiServer>();
  std::shared_ptr<kube::Client> client_ = api_->NewClient();
  ControllerCaches caches_;
  FakeClock clock_;
  std::shared_ptr<KeyEvents> keys_ = std::make_shared<KeyEvents>(std::make_shared<WorkQueue>(
      WorkQueueOptions{.backoff_initial = 1s, .clock = &clock_}));
  // The exporters' answers; by default none answers (a pod with no exporter yet).
  StepsFetch fetch_ = [](const PodFacts&, const ScraperOptions&, std::stop_token) -> Result<telemetry::StepsDocument> {
    return Status::Error("no exporter");
  };
  std::atomic<int> hanging_{0};  // reads of an exporter that never answers
  std::unique_ptr<TuningController> controller_;
};

TEST_F(TuningControllerTest, CreatesTheGrainTuningAndWritesItsStatus) {
  StartWith(ManagedPod("Running"));
  const long before = keys_->handled();
  EXPECT_EQ(controller_->ProcessReady(), 1);
  std::optional<json> gt = StoredTuning();
  ASSERT_TRUE(gt);
  EXPECT_EQ((*gt)["spec"]["tuningKey"], "llama");
  EXPECT_EQ((*gt)["status"]["recommendation"]["workers"], 4);
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 1);
  EXPECT_EQ(controller_->counters().status_writes, 1);  // the status subresource
  EXPECT_EQ(api_->Count("GET", kGrainTunings + std::string("/") + workload::GrainTuningName("llama")), 0)
      << "the write started from the created object, not from a read";
  EXPECT_EQ(controller_->counters().reconcile_errors, 0);
  // The GrainTuning's own add and update events queue the key again; nothing changed, so
  // nothing is written (a reconcile from the cache's older copy may try, get 409 and find the
  // stored status equal).
  WaitFor([&] { return keys_->handled() >= before + 2; });
  controller_->ProcessReady();
  const std::string version = (*StoredTuning())["metadata"]["resourceVersion"];
  EXPECT_EQ(controller_->counters().status_writes, 1) << "a status equal to the stored one was written";
  // A running attempt is looked at again after running_requeue, and not before; with nothing
  // new it writes nothing, in one request at most.
  const long reconciles = controller_->counters().reconciles;
  const int requests = api_->Count("PUT", kGrainTunings) + api_->Count("GET", kGrainTunings + std::string("/") + workload::GrainTuningName("llama"));
  Advance(4999ms);
  EXPECT_EQ(controller_->ProcessReady(), 0);
  Advance(1ms);
  EXPECT_EQ(controller_->ProcessReady(), 1);
  EXPECT_EQ(controller_->counters().reconciles, reconciles + 1);
  EXPECT_EQ(controller_->counters().status_writes, 1);
  EXPECT_EQ((*StoredTuning())["metadata"]["resourceVersion"], version);
  EXPECT_EQ(api_->Count("PUT", kGrainTunings) + api_->Count("GET", kGrainTunings + std::string("/") + workload::GrainTuningName("llama")), requests)
      << "an unchanged status cost API requests";
  EXPECT_EQ(controller_->counters().deferred, 0);
}

TEST_F(TuningControllerTest, ARetryableErrorBacksTheKeyOffEvenWhenItsPodsChange) {
  StartWith(ManagedPod("Running"));
  api_->FailNext("POST", kGrainTunings, 503, "ServiceUnavailable");
  controller_->ProcessReady();
  EXPECT_EQ(controller_->counters().reconcile_errors, 1);
  EXPECT_FALSE(StoredTuning());
  TouchPod();
  controller_->ProcessReady();  // same instant: still backing off
  EXPECT_EQ(controller_->counters().deferred, 1);
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 1);
  Advance(1s);  // the first delay is at most backoff_initial
  controller_->ProcessReady();
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 2);
  EXPECT_TRUE(StoredTuning());
}

TEST_F(TuningControllerTest, ATerminalErrorParksTheKeyUntilItsPodsChange) {
  StartWith(ManagedPod("Running"));
  api_->FailNext("POST", kGrainTunings, 403, "Forbidden");
  controller_->ProcessReady();
  EXPECT_EQ(controller_->counters().reconcile_errors, 1);
  Advance(1h);
  EXPECT_EQ(controller_->ProcessReady(), 0);  // time alone does not retry it
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 1);
  TouchPod();
  controller_->ProcessReady();
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 2);
  EXPECT_TRUE(StoredTuning());
}

TEST_F(TuningControllerTest, AKeyWithNoPodAliveIsLookedAtOnlyWhenAPodChanges) {
  StartWith(ManagedPod("Succeeded"));
  const long before = keys_->handled();
  controller_->ProcessReady();
  ASSERT_TRUE(StoredTuning());
  WaitFor([&] { return keys_->handled() >= before + 2; });  // its GrainTuning's add and update
  controller_->ProcessReady();
  const long reconciles = controller_->counters().reconciles;
  Advance(1h);
  EXPECT_EQ(controller_->ProcessReady(), 0) << "an ended attempt was polled";
  EXPECT_EQ(controller_->counters().reconciles, reconciles);
  TouchPod();
  controller_->ProcessReady();
  EXPECT_EQ(controller_->counters().reconciles, reconciles + 1);
}

TEST_F(TuningControllerTest, AConflictWritingStatusIsRetriedAgainstTheLatestObject) {
  StartWith(ManagedPod("Running"));
  api_->FailNext("PUT", kGrainTunings, 409, "Conflict", 2);
  controller_->ProcessReady();
  EXPECT_EQ(controller_->counters().reconcile_errors, 0);
  EXPECT_EQ(api_->Count("PUT", kGrainTunings), 3);
  EXPECT_EQ((*StoredTuning())["status"]["recommendation"]["workers"], 4);
  // The object read again after each conflict is the one the status was computed from (the
  // one just created): the reconcile ran once for all three tries.
  EXPECT_EQ(controller_->counters().status_reconciles, 1);
}

// A transport that changes the stored GrainTuning (as another writer would) just before the
// controller's first status write reaches the API server, so that write meets a conflict.
class ChangedBeforeFirstStatusWrite : public kube::HttpTransport {
 public:
  ChangedBeforeFirstStatusWrite(std::shared_ptr<kube::FakeApiServer> api, std::function<void()> change)
      : api_(std::move(api)), change_(std::move(change)) {}
  kube::ApiResult<kube::HttpResponse> Send(const kube::HttpRequest& request, std::stop_token stop) override {
    if (request.method == "PUT" && request.path_and_query.starts_with(kGrainTunings) && !changed_.exchange(true))
      change_();
    return api_->Send(request, stop);
  }
  kube::ApiResult<kube::HttpResponse> Stream(const kube::HttpRequest& request,
                                             const std::function<bool(std::string_view)>& on_chunk,
                                             std::stop_token stop) override {
    return api_->Stream(request, on_chunk, stop);
  }

 private:
  std::shared_ptr<kube::FakeApiServer> api_;
  std::function<void()> change_;
  std::atomic<bool> changed_{false};
};

TEST_F(TuningControllerTest, AStatusWriteThatMeetsAChangedObjectReconcilesItAgain) {
  // Between the controller's read and its status write, someone sets the mode to Off: the
  // write conflicts, and the status written is the one reconciled from the changed object.
  client_ = std::make_shared<kube::Client>(std::make_shared<ChangedBeforeFirstStatusWrite>(api_, [this] {
    json gt = *StoredTuning();
    gt["spec"]["mode"] = "Off";
    api_->Put(kube::resources::kGrainTunings, gt);
  }));
  StartWith(ManagedPod("Running"));
  controller_->ProcessReady();
  EXPECT_EQ(controller_->counters().reconcile_errors, 0);
  EXPECT_EQ(api_->Count("PUT", kGrainTunings), 2);
  EXPECT_EQ((*StoredTuning())["spec"]["mode"], "Off");
  EXPECT_EQ((*StoredTuning())["status"]["phase"], "Paused");
  EXPECT_EQ(controller_->counters().status_reconciles, 2);
}

TEST_F(TuningControllerTest, AnExporterThatNeverAnswersDelaysNoReconcileAndNoOtherKey) {
  // The first pod's exporter hangs until the controller stops; the second answers at once.
  fetch_ = [this](const PodFacts& pod, const ScraperOptions&, std::stop_token stop) -> Result<telemetry::StepsDocument> {
    if (pod.name == "llama-0") {
      ++hanging_;
      while (!stop.stop_requested()) std::this_thread::yield();
      return Status::Error("hung");
    }
    telemetry::StepsDocument doc;
    doc.pod_uid = pod.uid;
    for (long i = 0; i < 22; ++i) doc.steps.push_back({.step = i, .step_time_seconds = 4.3});
    return doc;
  };
  json running = ManagedPod("Running");
  running["status"]["podIP"] = "10.0.0.1";
  running["metadata"]["uid"] = "uid-0";
  json other = ManagedPod("Running");
  other["metadata"]["name"] = "gemma-0";
  other["metadata"]["uid"] = "uid-1";
  other["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "gemma";
  other["status"]["podIP"] = "10.0.0.2";
  api_->Put(kube::resources::kPods, other);
  StartWith(running);
  WaitFor([&] { return keys_->handled() >= 2; });  // both pods' add events
  controller_->ProcessReady();  // both reconciled; neither waited on an exporter
  EXPECT_TRUE(StoredTuning());
  EXPECT_TRUE(api_->Get(kube::resources::kGrainTunings, "team-a", workload::GrainTuningName("gemma")));
  WaitFor([&] { return hanging_ > 0; });
  // gemma's steps arrive and queue its key, while llama's exporter is still hanging.
  json gemma;
  WaitFor([&] {
    controller_->ProcessReady();
    gemma = api_->Get(kube::resources::kGrainTunings, "team-a", workload::GrainTuningName("gemma"))
                .value_or(json::object());
    return gemma.value("/status/trials/0/samples"_json_pointer, 0) > 0;
  });
  EXPECT_EQ(gemma.value("/status/trials/0/samples"_json_pointer, 0), 10) << gemma.dump();
  EXPECT_EQ(controller_->scraper_figures().in_flight, 1) << "llama's exporter stopped hanging";
  controller_.reset();  // cancels the hanging read
}

TEST_F(TuningControllerTest, ANewSlicesExportersAreAskedAFewAtATimeUntilOneAnswers) {
  // Ten hosts of one attempt; the first eight exporters never answer (blackholed), the last two do.
  std::mutex mu;
  std::vector<std::string> asked;  // pod names, in the order their exporters were read
  fetch_ = [&](const PodFacts& pod, const ScraperOptions&, std::stop_token) -> Result<telemetry::StepsDocument> {
    {
      std::lock_guard<std::mutex> lock(mu);
      asked.push_back(pod.name);
    }
    if (pod.name < "llama-8") return Status::Error("blackholed");
    telemetry::StepsDocument doc;
    doc.pod_uid = pod.uid;
    for (long i = 0; i < 22; ++i) doc.steps.push_back({.step = i, .step_time_seconds = 4.3});
    return doc;
  };
  auto host = [](int i) {
    json pod = ManagedPod("Running");
    pod["metadata"]["name"] = "llama-" + std::to_string(i);
    pod["metadata"]["uid"] = "uid-" + std::to_string(i);
    pod["status"]["podIP"] = "10.0.0." + std::to_string(i + 1);
    return pod;
  };
  for (int i = 1; i < 10; ++i) api_->Put(kube::resources::kPods, host(i));
  StartWith(host(0));
  WaitFor([&] { return keys_->handled() >= 10; });
  auto asked_so_far = [&] {
    std::lock_guard<std::mutex> lock(mu);
    return asked;
  };
  // Each reconcile asks two exporters not asked before; those that failed wait their backoff.
  // The last round's llama-8 answers: once it has, llama-9 (dispatched beside it) need not be
  // asked at all, so that round asks llama-8 and at most llama-9.
  std::vector<std::string> expected;
  for (int round = 0; round < 5; ++round) {
    if (round > 0) Advance(6s);  // the running requeue (5 s) and the failed reads' backoff (5 s)
    controller_->ProcessReady();
    expected.push_back("llama-" + std::to_string(2 * round));
    if (round < 4) expected.push_back("llama-" + std::to_string(2 * round + 1));
    WaitFor([&] { return asked_so_far().size() >= expected.size(); });
    // And for the reads to have finished (their failures recorded): a read still in flight
    // holds one of the attempt's two slots at the next reconcile.
    WaitFor([&] { return controller_->scraper_figures().in_flight == 0; });
    std::vector<std::string> got = asked_so_far();
    // The two reads of each round run on two threads: either may be recorded first.
    for (size_t pair = 0; pair + 1 < got.size(); pair += 2)
      std::sort(got.begin() + static_cast<long>(pair), got.begin() + static_cast<long>(pair) + 2);
    if (round == 4 && got.size() == expected.size() + 1) expected.push_back("llama-9");
    EXPECT_EQ(got, expected) << "round " << round;
  }
  // llama-8's steps call the key back; its trial is written.
  WaitFor([&] {
    controller_->ProcessReady();
    return StoredTuning().value_or(json::object()).value("/status/trials/0/samples"_json_pointer, 0) > 0;
  });
  const std::vector<std::string> all = asked_so_far();
  EXPECT_EQ(std::set<std::string>(all.begin(), all.end()).size(), all.size())
      << "an exporter was asked again before one answered";
  EXPECT_GE(all.size(), 9u);
  EXPECT_LE(all.size(), 10u);
}

TEST_F(TuningControllerTest, ATrialsProgressIsWrittenAtMostOncePerIntervalAndNeverLost) {
  std::atomic<int> steps_shown{22};
  fetch_ = [&steps_shown](const PodFacts& pod, const ScraperOptions&, std::stop_token) -> Result<telemetry::StepsDocument> {
    telemetry::StepsDocument doc;
    doc.pod_uid = pod.uid;
    for (long i = 0; i < steps_shown; ++i) doc.steps.push_back({.step = i, .step_time_seconds = 4.3});
    return doc;
  };
  json running = ManagedPod("Running");
  running["status"]["podIP"] = "10.0.0.1";
  running["metadata"]["uid"] = "uid-0";
  StartWith(running);
  auto samples = [&] { return StoredTuning().value_or(json::object()).value("/status/trials/0/samples"_json_pointer, 0); };
  // The first trial is news: written as soon as its steps are read.
  WaitFor([&] {
    controller_->ProcessReady();
    return samples() > 0;
  });
  const int first = samples();
  const long writes = controller_->counters().status_writes;
  EXPECT_EQ(controller_->counters().progress_deferred, 0);

  // The trainer goes on; 5 s later (the running requeue, and the scraper's freshness) its new
  // steps are read. More samples of the same verdict and value: progress, which waits.
  steps_shown = 60;
  Advance(5s);
  WaitFor([&] {
    controller_->ProcessReady();
    return controller_->counters().progress_deferred > 0;
  });
  EXPECT_EQ(samples(), first);
  EXPECT_EQ(controller_->counters().status_writes, writes);

  // 30 s after the last write it is due: written, with everything read meanwhile.
  Advance(24s);
  controller_->ProcessReady();
  EXPECT_EQ(samples(), first) << "progress written before its interval";
  Advance(1s);
  WaitFor([&] {
    controller_->ProcessReady();
    return samples() > first;
  });
  EXPECT_EQ(controller_->counters().status_writes, writes + 1);
  const int written = samples();

  // More progress waits again; then the pod finishes before it is due: its attempt's last
  // steps read are written at once (its exporter is gone with it).
  steps_shown = 90;
  const long deferred = controller_->counters().progress_deferred;
  Advance(5s);
  WaitFor([&] {
    controller_->ProcessReady();
    return controller_->counters().progress_deferred > deferred;
  });
  EXPECT_EQ(samples(), written);
  json done = *api_->Get(kube::resources::kPods, "team-a", "llama-0");
  done["status"]["phase"] = "Succeeded";
  api_->Put(kube::resources::kPods, done);
  WaitFor([&] {
    controller_->ProcessReady();
    return samples() > written;
  });
  EXPECT_EQ(StoredTuning()->value("/status/endedAttempts"_json_pointer, json::array()), json({0}));
  EXPECT_EQ(controller_->counters().reconcile_errors, 0);
}

}  // namespace
}  // namespace graintune::op

namespace graintune::op {
namespace {

// An exporter whose answers are refused: each refusal is counted, and its attempt gets one
// Warning Event however often it is read.
TEST_F(TuningControllerTest, ARefusedExporterAnswerIsCountedAndWarnedAboutOncePerAttempt) {
  fetch_ = [](const PodFacts& pod, const ScraperOptions& options, std::stop_token) -> Result<telemetry::StepsDocument> {
    const std::string why = "rejected: the exporter's /steps answer: step entry 0: step_time_seconds 1e308 is outside [0, 86400]";
    if (options.on_rejected) options.on_rejected(pod, why);
    return Status::Error(why);
  };
  json pod = ManagedPod("Running");
  pod["status"]["podIP"] = "10.0.0.1";
  StartWith(pod);
  auto warnings = [&] {
    int n = 0;
    for (const kube::RecordedRequest& r : api_->Requests())
      if (r.method == "POST" && r.path_and_query.find("/events") != std::string::npos &&
          r.body.find("ExporterAnswerRejected") != std::string::npos)
        ++n;
    return n;
  };
  for (int round = 0; round < 4; ++round) {
    if (round > 0) Advance(61s);  // past the read's backoff: the exporter is read again
    controller_->ProcessReady();
    // The read has ended and been filed (a read still running is not queued again).
    WaitFor([&] {
      return controller_->counters().rejected_answers >= round + 1 && controller_->scraper_figures().scrapes >= round + 1;
    });
  }
  controller_->ProcessReady();  // the reconcile the last refusal queued
  EXPECT_GE(controller_->counters().rejected_answers, 4);
  EXPECT_EQ(warnings(), 1);
  bool names_the_field = false;
  for (const kube::RecordedRequest& r : api_->Requests())
    if (r.body.find("ExporterAnswerRejected") != std::string::npos)
      names_the_field = r.body.find("step_time_seconds 1e308") != std::string::npos;
  EXPECT_TRUE(names_the_field);
}

// Two hosts of a first attempt run a practice lap and wait for its answer: once both laps ended,
// the operator records status.lap and writes one value on both pods, which their launchers read;
// a later look changes nothing.
TEST_F(TuningControllerTest, APracticeLapsAnswerIsRecordedAndWrittenOnEveryHost) {
  fetch_ = [](const PodFacts& pod, const ScraperOptions&, std::stop_token) -> Result<telemetry::StepsDocument> {
    telemetry::StepsDocument doc;
    doc.pod_uid = pod.uid;
    telemetry::LapReport lap;
    for (long i = 1; i <= 22; ++i) lap.steps.push_back({.step = i, .step_time_seconds = i == 1 ? 30 : 4.3});
    lap.process = telemetry::ProcessFigures{64, 0.06, 1.6e9, 3e10, 1.5};
    lap.result = contract::LapResult{.completed = true, .outcome = "completed", .wall_seconds = 120, .steps = 22, .workers = 64};
    lap.result_age_seconds = 3;
    doc.lap = lap;
    return doc;
  };
  auto host = [](int i) {
    json pod = ManagedPod("Running");
    pod["metadata"]["name"] = "llama-" + std::to_string(i);
    pod["metadata"]["uid"] = "uid-" + std::to_string(i);
    pod["metadata"]["annotations"]["graintune.dev/worker-count"] = "64";
    pod["spec"]["containers"][0]["command"] = {"/graintune-launcher/graintune-launcher", "--answer-wait=120s",
                                               "--", "python3", "-m", "MaxText.train", "grain_worker_count=64"};
    pod["status"]["podIP"] = "10.0.0." + std::to_string(i + 1);
    return pod;
  };
  api_->Put(kube::resources::kPods, host(1));
  StartWith(host(0));
  std::optional<json> answered;
  WaitFor([&] {
    controller_->ProcessReady();
    std::optional<json> p0 = api_->Get(kube::resources::kPods, "team-a", "llama-0");
    std::optional<json> p1 = api_->Get(kube::resources::kPods, "team-a", "llama-1");
    if (!p0 || !p1 || !p0->contains("/metadata/annotations/graintune.dev~1lap-value"_json_pointer) ||
        !p1->contains("/metadata/annotations/graintune.dev~1lap-value"_json_pointer))
      return false;
    answered = p0;
    return true;
  });
  const std::string value = (*answered)["metadata"]["annotations"]["graintune.dev/lap-value"];
  EXPECT_EQ(api_->Get(kube::resources::kPods, "team-a", "llama-1")
                ->at("metadata").at("annotations").at("graintune.dev/lap-value"), value);
  const json lap = StoredTuning()->at("status").at("lap");
  ASSERT_TRUE(lap.contains("workers")) << lap.dump();
  EXPECT_EQ(std::to_string(lap["workers"].get<int>()), value);
  EXPECT_LT(lap["workers"].get<int>(), 64) << "64 workers busy 6% of the time are far more than the run needs";
  EXPECT_EQ(lap["hosts"], 2);
  EXPECT_EQ(lap["admissionWorkers"], 64);
  EXPECT_EQ(lap["attempt"], 0);
  EXPECT_GE(controller_->counters().lap_answers, 2);
  EXPECT_GE(api_->Count("POST", "/apis/events.k8s.io/v1/namespaces/team-a/events"), 1);
  // Once the controller's cache sees the answers, nothing more is written on the pods.
  WaitFor([&] {
    for (const char* name : {"llama-0", "llama-1"}) {
      std::optional<json> cached = caches_.pods->Get("team-a", name);
      if (!cached || !cached->contains("/metadata/annotations/graintune.dev~1lap-value"_json_pointer)) return false;
    }
    return true;
  });
  controller_->ProcessReady();
  const int patches = api_->Count("PATCH", "/api/v1/namespaces/team-a/pods/llama-0");
  EXPECT_GE(patches, 1);
  Advance(6s);
  controller_->ProcessReady();
  EXPECT_EQ(api_->Count("PATCH", "/api/v1/namespaces/team-a/pods/llama-0"), patches);
  EXPECT_EQ(api_->Get(kube::resources::kPods, "team-a", "llama-0")
                ->at("metadata").at("annotations").at("graintune.dev/lap-value"), value);
}

}  // namespace
}  // namespace graintune::op
