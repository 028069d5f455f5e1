// Real MaxText resuming from its own checkpoints under graintune (label maxtext). MaxText (0.2.5,
// grain 0.2.18) saves Grain's iterator state, one per worker process, with every checkpoint; a run
// resumed with another grain_worker_count stops early and exits 0. Each test runs MaxText's own
// trainer in the tiny data-bound JobSet on the stand-in kubelet, with checkpoints in a folder of
// this machine that outlives the pods, and graintune in Auto mode:
//   1. Pinned: the first attempt (1 worker, data-bound) is failed after a checkpoint; the restart
//      gets the same value although the operator measured that 2 would be faster, resumes from the
//      checkpoint and trains every step to `steps` - 1, with no "Training stopped".
//   2. Elastic: with grain_use_elastic_iterator=true packing=false the restart gets the
//      recommended, different value and still reaches `steps` - 1.
//   3. Resubmitted: the JobSet is deleted mid-run and another JobSet with the same run_name is
//      created after graintune's webhook and operator restart: it keeps the deleted run's value
//      and resumes to the end.
//   4. The hazard: a checkpoint written with 1 worker outside graintune, resumed under graintune
//      with its own pick (2 on this machine): MaxText stops early with exit 0, and graintune
//      reports EndedEarly (the condition, a Warning Event). If a later MaxText trains on, the test
//      says so. (Resuming with fewer workers than the checkpoint's fails otherwise: 3 -> 2 raises
//      orbax's NoEntryError for the `iter` item at restore.)
//
// Needs the GRAINTUNE_MAXTEXT_* variables (scripts/test.sh) and the control plane; it fails,
// never skips, under GRAINTUNE_REQUIRE_CONTROLPLANE=1.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "telemetry/last_step_message.h"
#include "telemetry/maxtext_metrics.h"
#include "tests/controlplane/maxtext_workload.h"
#include "tests/controlplane/operator_under_test.h"
#include "tests/controlplane/pod_runner.h"
#include "tests/controlplane/process_tree.h"
#include "tests/controlplane/result_text.h"
#include "tests/controlplane/shared_control_plane.h"
#include "tests/controlplane/wait_for.h"
#include "tests/controlplane/webhook_under_test.h"

namespace graintune::testing {
namespace {

using kube::Json;

constexpr char kJobSet[] = "tiny";
constexpr int kSteps = 22;
// The namespace policy's minWorkers once attempt 0 runs (AttemptZeroPastACheckpoint).
constexpr int kFloorAfterAttemptZero = 2;
// kTinyCheckpointing's checkpoints go to a folder of this machine that every attempt's pod sees
// at the same path.
constexpr const char* kCheckpointing = kTinyCheckpointing;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The training steps MaxText's metrics file holds, in file order.
std::vector<long> StepsInFile(const std::string& path) {
  std::vector<long> steps;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (Result<telemetry::MetricsLine> l = telemetry::ParseMetricsLine(line); l.ok() && l->sample) steps.push_back(l->sample->step);
  return steps;
}

// "restoring from this run's directory step N" in MaxText's log; -1 when it did not restore.
long RestoredStep(const std::string& log) {
  static const std::regex restored(R"(restoring from this run's directory step (\d+))");
  std::smatch m;
  return std::regex_search(log, m, restored) ? std::stol(m[1]) : -1;
}

// One attempt of the tiny JobSet as the stand-in kubelet runs it.
struct Attempt {
  std::string pod, dir;
  int workers = -1;
  int pid = -1;
};

class MaxTextResume : public ::testing::Test {
 protected:
  // Everything one test needs, in its own namespace: a TPU host shaped like this machine, the
  // namespace policy (at most `max_workers`; spec.startCheck as `start_check` says), the webhook,
  // the operator and the stand-in kubelet.
  void Start(const std::string& ns, int max_workers, bool start_check = true) {
    maxtext_ = MaxTextFromEnvironment();
    if (!maxtext_) {
      const char* req = std::getenv("GRAINTUNE_REQUIRE_CONTROLPLANE");
      if (req && std::string(req) == "1")
        FAIL() << "GRAINTUNE_MAXTEXT_* are not set (scripts/test.sh sets them from scripts/lib/maxtext_trainer.sh)";
      GTEST_SKIP() << "GRAINTUNE_MAXTEXT_* are not set: run scripts/test.sh";
    }
    GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kFull);
    cp_ = cp;
    ns_ = ns;
    Result<Json> node = MaxTextHost("maxtext-host", 2.0, 16.0 * (1 << 30));
    ASSERT_TRUE(node.ok()) << node.error();
    auto created = cp_->AdminClient()->Create(kube::resources::kNodes, "", *node);
    ASSERT_TRUE(created.ok() || created.error().IsAlreadyExists()) << created.status().message();
    ASSERT_TRUE(cp_->Kubectl({"create", "namespace", ns_}).ok());
    ASSERT_TRUE(cp_->Kubectl({"apply", "-f", "-"}, NamespacePolicy(ns_, max_workers, 1, start_check)).ok());
    auto webhook = WebhookUnderTest::Start(*cp_, {.binary = GRAINTUNE_WEBHOOK_BIN});
    ASSERT_TRUE(webhook.ok()) << webhook.error();
    webhook_ = std::move(*webhook);
    auto op = StartOperatorUnderTest(*cp_, GRAINTUNE_OPERATOR_BIN, "op-" + ns_);
    ASSERT_TRUE(op.ok()) << op.error();
    operator_ = std::move(*op);
    runner_ = std::make_unique<PodRunner>(*cp_, PodRunnerOptions{.exporter_binary = GRAINTUNE_EXPORTER_BIN,
                                                                 .own_trainer = MaxTextTrainer(*maxtext_),
                                                                 .launcher_binary = GRAINTUNE_LAUNCHER_BIN,
                                                                 .ns = ns_});
    runner_->Start();
    out_dir_ = cp_->dir() + "/" + ns_ + "-out";
    std::filesystem::create_directories(out_dir_);
  }

  void TearDown() override {
    if (runner_) runner_->Stop();
    if (!cp_ || ns_.empty()) return;
    cp_->Kubectl({"delete", "namespace", ns_, "--wait=false"});
    cp_->Kubectl({"delete", "graintunepolicy", ns_});
  }

  void Apply(const std::string& extra_args) {
    Result<std::string> applied = cp_->Kubectl(
        {"apply", "-f", "-"},
        TinyMaxTextJobSet(*maxtext_, {.ns = ns_, .name = jobset_, .out_dir = out_dir_, .steps = kSteps,
                                      .extra_args = extra_args}));
    ASSERT_TRUE(applied.ok()) << applied.error();
  }

  // The run's directory: run_name is the first JobSet's name (a resubmitted JobSet names it).
  std::string CheckpointDir() const { return out_dir_ + "/" + kJobSet + "/checkpoints"; }

  // Waits for `attempt`'s pod and its MaxText process.
  Attempt WaitForAttempt(int attempt) {
    Attempt a;
    EXPECT_TRUE(WaitFor([&] {
      const std::vector<Json> pods = AttemptPods(*cp_, ns_, jobset_, attempt);
      if (pods.size() != 1) return false;
      a.pod = pods[0]["metadata"].value("name", "");
      a.workers = WorkerCountOf(pods[0]);
      std::optional<int> pid = runner_->TrainerPid(a.pod);
      if (!pid) return false;
      a.pid = *pid;
      a.dir = runner_->PodDir(a.pod);
      return true;
    }, std::chrono::seconds(120))) << Text(cp_->Kubectl({"get", "jobset,jobs,pods", "-n", ns_, "-o", "wide"}));
    return a;
  }

  // Waits for MaxText to exit by itself, then ends the pod as the kubelet would: Succeeded, with
  // the exporter's termination message in its sidecar's status.
  void FinishAttempt(const Attempt& a) {
    ASSERT_TRUE(WaitFor([&] { return ProcessEnded(a.pid); }, std::chrono::seconds(420)))
        << TailOfFile(a.dir + "/trainer.log");
    const std::string message_file = a.dir + "/metrics.jsonl.termination-log";
    // The exporter polls every 100 ms here: its message catches up with the file's last step.
    const std::vector<long> steps = StepsInFile(a.dir + "/metrics.jsonl");
    ASSERT_FALSE(steps.empty()) << TailOfFile(a.dir + "/trainer.log");
    ASSERT_TRUE(WaitFor([&] { return telemetry::ParseLastStepMessage(ReadAll(message_file)) == steps.back(); },
                        std::chrono::seconds(30)))
        << "the exporter's termination message: " << ReadAll(message_file) << "\nits log:\n"
        << TailOfFile(a.dir + "/exporter.log", 3000) << "\nthe trainer's metrics file ends:\n"
        << TailOfFile(a.dir + "/metrics.jsonl", 1500);
    ASSERT_TRUE(cp_->Kubectl({"annotate", "pod", "-n", ns_, a.pod,
                              "graintune.dev/test-exporter-message=" + ReadAll(message_file),
                              "graintune.dev/test-terminate=Completed"}).ok());
  }

  std::optional<Json> Tuning() {
    auto r = cp_->AdminClient()->Get(kube::resources::kGrainTunings, ns_, jobset_);
    if (!r.ok()) return std::nullopt;
    return *r;
  }
  std::string TuningYaml() { return Text(cp_->Kubectl({"get", "graintunings", "-n", ns_, "-o", "yaml"})); }
  static Json Condition(const Json& gt, const std::string& type) {
    for (const Json& c : gt.value("/status/conditions"_json_pointer, Json::array()))
      if (c.value("type", "") == type) return c;
    return Json::object();
  }

  // Attempt 0 runs; once it does, the platform lifts the cap and sets a floor of 2 workers, so
  // any value graintune may still change (a later attempt of an elastic run, the next run) is at
  // least 2 whatever attempt 0 measured on this shared machine, while a value a run keeps stays
  // 1. It runs on until a checkpoint exists past step 10 and the operator has its trial.
  // Returns it, still running.
  Attempt AttemptZeroPastACheckpoint() {
    Attempt a0 = WaitForAttempt(0);
    EXPECT_TRUE(cp_->Kubectl({"apply", "-f", "-"}, NamespacePolicy(ns_, 64, kFloorAfterAttemptZero)).ok());
    EXPECT_TRUE(WaitFor([&] {
      const std::vector<long> steps = StepsInFile(a0.dir + "/metrics.jsonl");
      std::optional<Json> gt = Tuning();
      return !steps.empty() && steps.back() >= 12 && gt &&
             gt->value("/status/trials/0/samples"_json_pointer, 0) >= 8;
    }, std::chrono::seconds(300))) << TailOfFile(a0.dir + "/trainer.log") << TuningYaml();
    EXPECT_FALSE(ProcessEnded(a0.pid)) << "MaxText ended before the test stopped it";
    EXPECT_TRUE(std::filesystem::exists(CheckpointDir() + "/10")) << CheckpointDir();
    return a0;
  }

  // AttemptZeroPastACheckpoint, then attempt 0 fails; returns it.
  Attempt FailAttemptZeroAfterACheckpoint() {
    Attempt a0 = AttemptZeroPastACheckpoint();
    EXPECT_TRUE(cp_->Kubectl({"annotate", "pod", "-n", ns_, a0.pod, "graintune.dev/test-terminate=Error"}).ok());
    return a0;
  }

  // In namespace `ns` capped at 1 worker, the tiny JobSet with `extra_args`, whose attempt 0 runs
  // with 1 worker and is failed after a checkpoint (FailAttemptZeroAfterACheckpoint).
  Attempt StartAndFailAttemptZero(const std::string& ns, const std::string& extra_args) {
    Start(ns, 1);
    if (HasFatalFailure() || IsSkipped()) return {};
    Apply(extra_args);
    if (HasFatalFailure()) return {};
    Attempt a0 = FailAttemptZeroAfterACheckpoint();
    EXPECT_EQ(a0.workers, 1);
    return a0;
  }

  // The resumed attempt trained every step from its checkpoint to the last, and never stopped.
  void ExpectResumedToTheEnd(const Attempt& a) {
    const std::string log = ReadAll(a.dir + "/trainer.log");
    const long restored = RestoredStep(log);
    const std::vector<long> steps = StepsInFile(a.dir + "/metrics.jsonl");
    std::printf("attempt in pod %s: %d workers, resumed from checkpoint step %ld, metrics steps %ld..%ld (%zu lines)\n",
                a.pod.c_str(), a.workers, restored, steps.empty() ? -1 : steps.front(),
                steps.empty() ? -1 : steps.back(), steps.size());
    EXPECT_GE(restored, 10) << TailOfFile(a.dir + "/trainer.log", 3000);
    std::vector<long> expected;
    for (long s = restored + 1; s < kSteps; ++s) expected.push_back(s);
    EXPECT_EQ(steps, expected) << "no gap from the checkpoint's step to steps - 1";
    EXPECT_EQ(log.find("Training stopped"), std::string::npos) << TailOfFile(a.dir + "/trainer.log", 3000);
  }

  // A run graintune never saw: 12 steps with 1 worker into this namespace's checkpoint directory
  // (the tiny JobSet's run_name), so the JobSet resumes a checkpoint saved with 1 worker.
  void RunBeforeGraintuneWithOneWorker() {
    const std::string venv_bin = std::filesystem::path(maxtext_->python).parent_path();
    std::vector<std::string> argv = {maxtext_->python, "-m", "maxtext.trainers.pre_train.train"};
    std::istringstream words(maxtext_->tiny_args + " grain_train_files=" + maxtext_->records +
                             " tokenizer_path=" + maxtext_->tokenizer + " run_name=" + kJobSet +
                             " base_output_directory=" + out_dir_ + " steps=12 grain_worker_count=1 " +
                             kCheckpointing + " metrics_file=" + out_dir_ + "/before.jsonl");
    for (std::string w; words >> w;) argv.push_back(w);
    {
      auto before = ChildProcess::Spawn(argv, out_dir_ + "/before.log",
                                        {"JAX_PLATFORMS=cpu", "XLA_FLAGS=--xla_cpu_multi_thread_eigen=false",
                                         "PATH=" + venv_bin + ":/usr/bin:/bin"});
      ASSERT_TRUE(before.ok()) << before.error();
      ASSERT_TRUE(WaitFor([&] { return !before->Running(); }, std::chrono::seconds(420)))
          << TailOfFile(out_dir_ + "/before.log");
      ASSERT_EQ(before->exit_status(), 0) << TailOfFile(out_dir_ + "/before.log");
    }
    ASSERT_TRUE(std::filesystem::exists(CheckpointDir() + "/11")) << TailOfFile(out_dir_ + "/before.log");
  }

  // In namespace `ns` (spec.startCheck as `start_check` says): the tiny JobSet over a checkpoint
  // another run saved with 1 worker, whose attempt 0 (`a0`, graintune's pick: more than 1) runs
  // to its end.
  void AttemptZeroOverAOneWorkerCheckpoint(const std::string& ns, bool start_check, Attempt& a0) {
    Start(ns, 64, start_check);
    if (HasFatalFailure() || IsSkipped()) return;
    RunBeforeGraintuneWithOneWorker();
    if (HasFatalFailure()) return;
    Apply(kCheckpointing);
    if (HasFatalFailure()) return;
    a0 = WaitForAttempt(0);
    if (HasFatalFailure()) return;
    ASSERT_GT(a0.workers, 1) << "graintune's pick must differ from the checkpoint's for this test";
    FinishAttempt(a0);
  }

  std::optional<MaxTextEnv> maxtext_;
  ControlPlane* cp_ = nullptr;
  std::string ns_, out_dir_;
  std::string jobset_ = kJobSet;  // the JobSet (and its GrainTuning) the helpers follow
  std::unique_ptr<WebhookUnderTest> webhook_;
  ChildProcess operator_;
  std::unique_ptr<PodRunner> runner_;
};

TEST_F(MaxTextResume, APinnedCheckpointResumesWithItsValueAndReachesItsLastStep) {
  const Attempt a0 = StartAndFailAttemptZero("resume-pinned", kCheckpointing);
  if (HasFatalFailure() || IsSkipped()) return;

  // The next run gets the policy's floor or more; this run keeps 1.
  std::optional<Json> gt;
  ASSERT_TRUE(WaitFor([&] {
    gt = Tuning();
    return gt && gt->value("/status/recommendation/attempt"_json_pointer, 0) == 1 &&
           gt->contains("/status/nextRun/workers"_json_pointer) &&
           Condition(*gt, "ValuePinned").value("status", "") == "True";
  }, std::chrono::seconds(60))) << TuningYaml();
  const int next_run = gt->value("/status/nextRun/workers"_json_pointer, 0);
  EXPECT_GE(next_run, kFloorAfterAttemptZero) << TuningYaml();
  EXPECT_EQ(gt->value("/status/recommendation/workers"_json_pointer, 0), 1);
  EXPECT_EQ(gt->value("/status/runs/0/checkpointDir"_json_pointer, ""), CheckpointDir());
  EXPECT_EQ(gt->value("/status/runs/0/workers"_json_pointer, 0), 1);
  const std::string reason = gt->value("/status/recommendation/reason"_json_pointer, "");
  EXPECT_NE(reason.find("attempt 1 keeps 1 workers"), std::string::npos) << reason;

  // JobSet restarts the slice: attempt 1 keeps 1 worker and trains to the end.
  const Attempt a1 = WaitForAttempt(1);
  if (HasFatalFailure()) return;
  EXPECT_EQ(a1.workers, 1) << "a resume with another count stops MaxText early";
  FinishAttempt(a1);
  if (HasFatalFailure()) return;
  ExpectResumedToTheEnd(a1);
  ASSERT_TRUE(WaitFor([&] {
    gt = Tuning();
    return gt && Condition(*gt, "EndedEarly").value("status", "") == "False" &&
           gt->value("/status/pinnedAttempt"_json_pointer, 0) == 1;
  }, std::chrono::seconds(60))) << TuningYaml();
  const std::string events = Text(cp_->Kubectl({"get", "events", "-n", ns_, "--field-selector", "reason=ValuePinned"}));
  EXPECT_NE(events.find("attempt 1 keeps 1 workers"), std::string::npos) << events;
  std::printf("ValuePinned: %s\n", Condition(*gt, "ValuePinned").value("message", "").c_str());
}

// xpk's way to resume: the JobSet (maxRestarts 0 or spent) is deleted and a JobSet of another
// name with the same run_name is created. Between the two, graintune's webhook and operator
// restart (as a helm upgrade rolls them). The new JobSet is a new workload with its own first
// pick (at least the policy's floor of 2), but it restores the deleted one's checkpoint: it gets
// the deleted run's value, and MaxText resumes from the checkpoint and trains to its last step.
TEST_F(MaxTextResume, ResubmitAnotherJobSetOfTheSameRunAfterAnUpgradeKeepsTheRunsValue) {
  Start("resubmit", 1);
  if (HasFatalFailure() || IsSkipped()) return;
  Apply(kCheckpointing);
  if (HasFatalFailure()) return;
  const Attempt a0 = AttemptZeroPastACheckpoint();
  if (HasFailure()) return;
  ASSERT_EQ(a0.workers, 1);

  // Deleted mid-run: its pods go, and with them MaxText.
  ASSERT_TRUE(cp_->Kubectl({"delete", "jobset", "-n", ns_, kJobSet, "--cascade=foreground", "--wait=true",
                            "--timeout=120s"}).ok());
  ASSERT_TRUE(WaitFor([&] { return ProcessEnded(a0.pid); }, std::chrono::seconds(120)))
      << "MaxText still runs after its JobSet was deleted";
  std::optional<Json> gt;
  ASSERT_TRUE(WaitFor([&] {
    gt = Tuning();
    return gt && gt->value("/status/runs/0/checkpointDir"_json_pointer, "") == CheckpointDir() &&
           gt->value("/status/nextRun/workers"_json_pointer, 0) >= kFloorAfterAttemptZero;
  }, std::chrono::seconds(60))) << TuningYaml();
  const int next_run = gt->value("/status/nextRun/workers"_json_pointer, 0);

  // The upgrade: both restart, the webhook with a new certificate and registration.
  webhook_.reset();
  operator_.Stop();
  auto webhook = WebhookUnderTest::Start(*cp_, {.binary = GRAINTUNE_WEBHOOK_BIN});
  ASSERT_TRUE(webhook.ok()) << webhook.error();
  webhook_ = std::move(*webhook);
  auto op = StartOperatorUnderTest(*cp_, GRAINTUNE_OPERATOR_BIN, "op-" + ns_ + "-upgraded");
  ASSERT_TRUE(op.ok()) << op.error();
  operator_ = std::move(*op);

  // A new run in this namespace now gets at least the floor (the restarted webhook has read the
  // policy once a dry run shows it).
  const std::string another_run = TinyMaxTextJobSet(
      *maxtext_, {.ns = ns_, .name = "tiny-another-run", .out_dir = out_dir_, .steps = kSteps,
                  .extra_args = kCheckpointing});
  std::string first_pick;
  EXPECT_TRUE(WaitFor([&] {
    const std::optional<Json> j = AdmittedAsDryRun(*cp_, another_run);
    first_pick = j ? j->value("/metadata/annotations/graintune.dev~1first-attempt-worker-count"_json_pointer, "")
                   : "";
    return !first_pick.empty() && std::stoi(first_pick) >= kFloorAfterAttemptZero;
  }, std::chrono::seconds(30))) << "a new run's first pick: " << first_pick;

  // The resubmission: another name, the same run_name (the later duplicate wins in MaxText).
  jobset_ = "tiny-resubmitted";
  Apply(std::string(kCheckpointing) + " run_name=" + kJobSet);
  if (HasFatalFailure()) return;
  const Attempt b0 = WaitForAttempt(0);
  if (HasFatalFailure()) return;
  std::printf("resubmitted JobSet: %d workers (the deleted run's 1; a new run gets %s, its next run %d)\n",
              b0.workers, first_pick.c_str(), next_run);
  EXPECT_EQ(b0.workers, 1) << "a resume with another count stops MaxText early";
  const std::vector<Json> pods = AttemptPods(*cp_, ns_, jobset_, 0);
  ASSERT_EQ(pods.size(), 1u);
  const std::string reason = pods[0].value("/metadata/annotations/graintune.dev~1reason"_json_pointer, "");
  EXPECT_NE(reason.find(CheckpointDir()), std::string::npos) << reason;
  FinishAttempt(b0);
  if (HasFatalFailure()) return;
  ExpectResumedToTheEnd(b0);
}

// About 3 minutes on 2 cores (199 s in a cold run of the test command): MaxText runs three
// times here (the first attempt until its checkpoint past step 10, its restart with another
// count to its last step, each a ~20 s JAX import and compile and 22 steps of a data-bound
// pipeline), and the elastic iterator's restore replays its state element by element.
TEST_F(MaxTextResume, AnElasticCheckpointResumesWithTheRecommendedValue) {
  const Attempt a0 = StartAndFailAttemptZero("resume-elastic",
                                             std::string(kCheckpointing) + " grain_use_elastic_iterator=true packing=false");
  if (HasFatalFailure() || IsSkipped()) return;
  std::optional<Json> gt;
  ASSERT_TRUE(WaitFor([&] {
    gt = Tuning();
    return gt && gt->value("/status/recommendation/attempt"_json_pointer, 0) == 1;
  }, std::chrono::seconds(60))) << TuningYaml();
  const Attempt a1 = WaitForAttempt(1);
  if (HasFatalFailure()) return;
  gt = Tuning();
  ASSERT_TRUE(gt);
  const int recommended = gt->value("/status/recommendation/workers"_json_pointer, 0);
  EXPECT_EQ(a1.workers, recommended) << TuningYaml();
  EXPECT_NE(a1.workers, a0.workers) << "the elastic iterator lets the value change";
  EXPECT_EQ(Condition(*gt, "ValuePinned").value("status", ""), "False");
  FinishAttempt(a1);
  if (HasFatalFailure()) return;
  ExpectResumedToTheEnd(a1);
}

// Without the start check (spec.startCheck: false), what the start check exists for: MaxText
// resumes a checkpoint whose Grain iterator holds another count, stops early, and graintune
// reports it.
TEST_F(MaxTextResume, WithoutTheStartCheckAChangedCountOnACheckpointStopsMaxTextEarlyAndGraintuneReportsIt) {
  Attempt a0;
  AttemptZeroOverAOneWorkerCheckpoint("resume-hazard", /*start_check=*/false, a0);
  if (HasFatalFailure() || IsSkipped()) return;
  const std::string log = ReadAll(a0.dir + "/trainer.log");
  const std::vector<long> steps = StepsInFile(a0.dir + "/metrics.jsonl");
  const bool stopped = log.find("Training stopped") != std::string::npos;
  std::printf("resumed with %d workers from a 1-worker checkpoint (step %ld): metrics steps %s, %s\n",
              a0.workers, RestoredStep(log),
              steps.empty() ? "none" : (std::to_string(steps.front()) + ".." + std::to_string(steps.back())).c_str(),
              stopped ? "\"Training stopped\"" : "no \"Training stopped\"");
  ASSERT_TRUE(stopped && !steps.empty() && steps.back() < kSteps - 1)
      << "MaxText resumed a Grain checkpoint with another worker count and trained to step "
      << (steps.empty() ? -1 : steps.back()) << " of " << kSteps
      << ": this MaxText no longer stops early, and graintune's pinning of checkpointed runs may be "
         "relaxed (workload/run_resume.h)\n" << TailOfFile(a0.dir + "/trainer.log", 3000);
  EXPECT_NE(log.find("EXIT_CODE=0"), std::string::npos) << "MaxText exits 0 when it stops early";

  std::optional<Json> gt;
  ASSERT_TRUE(WaitFor([&] {
    gt = Tuning();
    return gt && Condition(*gt, "EndedEarly").value("status", "") == "True";
  }, std::chrono::seconds(60))) << TuningYaml();
  EXPECT_EQ(gt->value("/status/endedEarly/lastStep"_json_pointer, -1L), steps.back());
  EXPECT_EQ(gt->value("/status/endedEarly/steps"_json_pointer, -1L), kSteps);
  const std::string events = Text(cp_->Kubectl({"get", "events", "-n", ns_, "--field-selector", "reason=EndedEarly"}));
  EXPECT_NE(events.find("Warning"), std::string::npos) << events;
  std::printf("EndedEarly: %s\n", Condition(*gt, "EndedEarly").value("message", "").c_str());
}

// The start check (docs/start-check.md) at the trainer's real start: admission wrote its own pick
// (it cannot see the checkpoint another run left), the check reads the checkpoint's Grain
// iterator, the trainer resumes with the 1 worker it was saved with and reaches its last step,
// and the operator records what the check saw, with an Event.
TEST_F(MaxTextResume, StartCheckResumesAChangedCountWithTheCountItsCheckpointSaved) {
  Attempt a0;
  AttemptZeroOverAOneWorkerCheckpoint("resume-checked", /*start_check=*/true, a0);
  if (HasFatalFailure() || IsSkipped()) return;
  ExpectResumedToTheEnd(a0);
  const std::string log = ReadAll(a0.dir + "/trainer.log");
  EXPECT_NE(log.find("graintune start check: the trainer starts with 1 workers"), std::string::npos)
      << TailOfFile(a0.dir + "/trainer.log", 3000);

  std::optional<Json> gt;
  ASSERT_TRUE(WaitFor([&] {
    gt = Tuning();
    return gt && gt->contains("/status/startCheck"_json_pointer);
  }, std::chrono::seconds(60))) << TuningYaml();
  const Json check = gt->at("/status/startCheck"_json_pointer);
  EXPECT_EQ(check.value("admissionWorkers", -1), a0.workers) << check.dump();
  EXPECT_EQ(check.value("startedWorkers", -1), 1) << check.dump();
  EXPECT_EQ(check.value("savedWorkers", -1), 1) << check.dump();
  const std::string events =
      Text(cp_->Kubectl({"get", "events", "-n", ns_, "--field-selector", "reason=StartCheckChangedValue"}));
  EXPECT_NE(events.find("the trainer runs with 1"), std::string::npos) << events;
  std::printf("start check: admission wrote %d, the trainer ran with %d: %s\n", a0.workers,
              check.value("startedWorkers", -1), check.value("why", "").c_str());
}

}  // namespace
}  // namespace graintune::testing
