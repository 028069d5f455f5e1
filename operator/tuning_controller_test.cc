// The controller's I/O shell against the fake API server: what it writes, when it retries,
// and when it leaves a key alone.
#include "operator/tuning_controller.h"
#include "workload/cluster_sources.h"

#include <gtest/gtest.h>

#include <thread>

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
    caches_.pods = std::make_shared<kube::Informer>(client_, kube::resources::kPods, managed);
    caches_.graintunings = std::make_shared<kube::Informer>(client_, kube::resources::kGrainTunings);
    caches_.policies = std::make_shared<kube::Informer>(client_, kube::resources::kGrainTunePolicies);
    caches_.namespaces = std::make_shared<kube::Informer>(client_, kube::resources::kNamespaces);
    caches_.nodes = std::make_shared<kube::Informer>(client_, kube::resources::kNodes);
    caches_.configmaps = std::make_shared<workload::ConfigMapFetcher>(workload::FetchConfigMapData(client_));
    caches_.Start();
    for (auto* i : {&caches_.pods, &caches_.graintunings, &caches_.policies, &caches_.namespaces,
                    &caches_.nodes})
      ASSERT_TRUE((*i)->WaitForSync(10s));
    ControllerOptions options;
    options.now = [this] { return now_; };
    options.backoff_initial = 1s;
    options.idle_requeue = 60s;
    controller_ = std::make_unique<TuningController>(
        client_, caches_, std::make_shared<kube::EventRecorder>(client_, "graintune.dev/operator", "test"),
        options);
  }
  void TearDown() override { caches_.Stop(); }

  // Changes the pod in the API and waits until the controller's cache holds the change.
  void TouchPod() {
    json pod = *api_->Get(kube::resources::kPods, "team-a", "llama-0");
    pod["metadata"]["annotations"]["touched"] = "yes";
    const std::string version = api_->Put(kube::resources::kPods, pod)["metadata"]["resourceVersion"];
    WaitFor([&] {
      std::optional<json> cached = caches_.pods->Get("team-a", "llama-0");
      return cached && (*cached)["metadata"]["resourceVersion"] == version;
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
  std::chrono::steady_clock::time_point now_{};
  std::unique_ptr<TuningController> controller_;
};

TEST_F(TuningControllerTest, CreatesTheGrainTuningAndWritesItsStatus) {
  StartWith(ManagedPod("Running"));
  controller_->ReconcileAll();
  std::optional<json> gt = StoredTuning();
  ASSERT_TRUE(gt);
  EXPECT_EQ((*gt)["spec"]["tuningKey"], "llama");
  EXPECT_EQ((*gt)["status"]["recommendation"]["workers"], 4);
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 1);
  EXPECT_EQ(api_->Count("PUT", kGrainTunings), 1);  // the status subresource
  EXPECT_EQ(controller_->counters().reconcile_errors, 0);
  // A running attempt is looked at on every pass.
  controller_->ReconcileAll();
  EXPECT_EQ(controller_->counters().reconciles, 2);
  EXPECT_EQ(controller_->counters().deferred, 0);
}

TEST_F(TuningControllerTest, ARetryableErrorBacksTheKeyOffEvenWhenItsPodsChange) {
  StartWith(ManagedPod("Running"));
  api_->FailNext("POST", kGrainTunings, 503, "ServiceUnavailable");
  controller_->ReconcileAll();
  EXPECT_EQ(controller_->counters().reconcile_errors, 1);
  EXPECT_FALSE(StoredTuning());
  TouchPod();
  controller_->ReconcileAll();  // same instant: still backing off
  EXPECT_EQ(controller_->counters().deferred, 1);
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 1);
  now_ += 1s;  // the first delay is at most backoff_initial
  controller_->ReconcileAll();
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 2);
  EXPECT_TRUE(StoredTuning());
}

TEST_F(TuningControllerTest, ATerminalErrorParksTheKeyUntilItsPodsChange) {
  StartWith(ManagedPod("Running"));
  api_->FailNext("POST", kGrainTunings, 403, "Forbidden");
  controller_->ReconcileAll();
  EXPECT_EQ(controller_->counters().reconcile_errors, 1);
  now_ += 1h;
  controller_->ReconcileAll();  // time alone does not retry it
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 1);
  EXPECT_EQ(controller_->counters().deferred, 1);
  TouchPod();
  controller_->ReconcileAll();
  EXPECT_EQ(api_->Count("POST", kGrainTunings), 2);
  EXPECT_TRUE(StoredTuning());
}

TEST_F(TuningControllerTest, AKeyWithNoPodAliveWaitsForIdleRequeueOrAPodChange) {
  StartWith(ManagedPod("Succeeded"));
  controller_->ReconcileAll();
  ASSERT_TRUE(StoredTuning());
  controller_->ReconcileAll();
  EXPECT_EQ(controller_->counters().reconciles, 1);
  EXPECT_EQ(controller_->counters().deferred, 1);
  now_ += 60s;
  controller_->ReconcileAll();
  EXPECT_EQ(controller_->counters().reconciles, 2);
  TouchPod();
  controller_->ReconcileAll();
  EXPECT_EQ(controller_->counters().reconciles, 3);
}

TEST_F(TuningControllerTest, AConflictWritingStatusIsRetriedAgainstTheLatestObject) {
  StartWith(ManagedPod("Running"));
  api_->FailNext("PUT", kGrainTunings, 409, "Conflict", 2);
  controller_->ReconcileAll();
  EXPECT_EQ(controller_->counters().reconcile_errors, 0);
  EXPECT_EQ(api_->Count("PUT", kGrainTunings), 3);
  EXPECT_EQ((*StoredTuning())["status"]["recommendation"]["workers"], 4);
}

}  // namespace
}  // namespace graintune::op
