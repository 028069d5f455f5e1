#include "webhook/worker_count_planner.h"

#include <gtest/gtest.h>

#include "webhook/lap_injection.h"
#include "workload/identity.h"
#include "workload/in_memory_sources.h"
#include "workload/workload_annotations.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

class PlannerTest : public ::testing::Test {
 protected:
  Plan Run(const json& object, workload::WorkloadKind kind) {
    return PlanWorkerCount(object, kind, "team-a",
                           PlannerSources{shapes_, history_, configmaps_, policies_});
  }
  workload::MachineTypeTableShapes shapes_;
  workload::InMemoryHistory history_;
  workload::InMemoryConfigMaps configmaps_;
  workload::FixedPolicy policies_;
};

json SeedJob() {
  return json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "llama", "namespace": "team-a"},
    "spec": {"template": {"spec": {
      "nodeSelector": {"cloud.google.com/gke-tpu-accelerator": "tpu-v6e-slice",
                       "cloud.google.com/gke-tpu-topology": "4x8"},
      "containers": [{"name": "jax-tpu",
        "command": ["bash", "-c", "python3 -m MaxText.train MaxText/configs/base.yml model_name=llama3-8b per_device_batch_size=2 max_target_length=8192 grain_worker_count=-1"],
        "resources": {"limits": {"google.com/tpu": 4}}}]}}}
  })");
}

TEST_F(PlannerTest, JobScriptMinusOneBecomesTheDecision) {
  const json job = SeedJob();
  Plan plan = Run(job, workload::WorkloadKind::kJob);
  ASSERT_TRUE(plan.changed) << (plan.warnings.empty() ? "" : plan.warnings[0]);
  ASSERT_TRUE(plan.decision);
  const std::string script =
      plan.mutated["spec"]["template"]["spec"]["containers"][0]["command"][2];
  std::string expected = job["spec"]["template"]["spec"]["containers"][0]["command"][2];
  expected.replace(expected.find("=-1"), 3, "=" + std::to_string(plan.workers));
  EXPECT_EQ(script, expected);  // only the -1 changed
  EXPECT_EQ(plan.mutated["metadata"]["annotations"][workload::kWorkerCountAnnotation],
            std::to_string(plan.workers));
  EXPECT_EQ(plan.mutated["spec"]["template"]["metadata"]["labels"][workload::kManagedLabel], "true");
  EXPECT_EQ(plan.host.machine_type, "ct6e-standard-4t");
  EXPECT_GT(plan.workers, 4);
}

// A Job in team-a whose demand team-b measured (slow steps: a low fed throughput): the value
// learns from it only when the policy shares team-b, and then names it (Plan::learned_from and
// graintune.dev/learned-from, which the operator copies into the GrainTuning).
TEST_F(PlannerTest, AValueLearnsFromAnotherNamespaceOnlyWhenThePolicySharesIt) {
  const Plan alone = Run(SeedJob(), workload::WorkloadKind::kJob);
  ASSERT_FALSE(alone.demand_key.empty());
  EXPECT_TRUE(alone.learned_from.empty());
  EXPECT_FALSE(alone.mutated["metadata"]["annotations"].contains(workload::kLearnedFromAnnotation));
  history_.PutGrainTuning({{"metadata", {{"namespace", "team-b"}, {"name", "llama-b"}}},
                           {"spec", {{"tuningKey", "llama-b"}}},
                           {"status", {{"learned", {{"machineType", "ct6e-standard-4t"},
                                                    {"fedTokensPerSecondPerHost", 3000},
                                                    {"demandKey", alone.demand_key}}}}}});
  const Plan unshared = Run(SeedJob(), workload::WorkloadKind::kJob);
  EXPECT_EQ(unshared.workers, alone.workers);
  EXPECT_TRUE(unshared.learned_from.empty());

  Policy shares_b;
  shares_b.learn_from.namespaces = {"team-b"};
  policies_ = workload::FixedPolicy(shares_b);
  const Plan shared = Run(SeedJob(), workload::WorkloadKind::kJob);
  EXPECT_LT(shared.workers, alone.workers) << "slow steps need fewer workers";
  EXPECT_EQ(shared.learned_from, std::vector<std::string>{"team-b/llama-b"});
  EXPECT_EQ(shared.demand_key, alone.demand_key);
  for (const char* meta : {"/metadata/annotations", "/spec/template/metadata/annotations"})
    EXPECT_EQ(shared.mutated[json::json_pointer(meta)][workload::kLearnedFromAnnotation], "team-b/llama-b") << meta;

  // A retry pod of that Job whose value comes from the workload's own recommendation learned
  // nothing from others: the template's learned-from is cleared, not carried.
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", shared.mutated["spec"]["template"]["metadata"]},
              {"spec", shared.mutated["spec"]["template"]["spec"]}};
  pod["metadata"]["name"] = "llama-retry";
  pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "llama";
  pod["metadata"]["annotations"][workload::kAttemptAnnotation] = "1";
  TuningHistory own;
  own.recommended_workers = shared.workers + 3;
  own.recommendation_attempt = 1;
  own.recommendation_reason = "measured";
  history_.Put("team-a", "llama", own);
  const Plan retry = Run(pod, workload::WorkloadKind::kPod);
  ASSERT_EQ(retry.outcome, PlanOutcome::kTuned) << (retry.warnings.empty() ? "" : retry.warnings[0]);
  EXPECT_EQ(retry.workers, shared.workers + 3);
  EXPECT_TRUE(retry.learned_from.empty());
  EXPECT_EQ(retry.mutated["metadata"]["annotations"][workload::kLearnedFromAnnotation], "");
}

TEST_F(PlannerTest, ReinvocationIsANoOp) {
  Plan first = Run(SeedJob(), workload::WorkloadKind::kJob);
  Plan second = Run(first.mutated, workload::WorkloadKind::kJob);
  EXPECT_FALSE(second.changed);
  EXPECT_EQ(second.mutated, first.mutated);
}

// A script that starts MaxText twice, the first without grain_worker_count (MaxText's default)
// and from another directory: admitted again as the API server stores it, the start that holds
// the applied value is still the run, and its checkpoint directory stays (found by the
// admission fuzzer).
TEST_F(PlannerTest, ReinvocationOfAScriptWithTwoStartsKeepsTheStartThatHeldMinusOne) {
  json job = SeedJob();
  std::string& script = job["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  script = "python3 -m MaxText.train MaxText/configs/base.yml run_name=smoke base_output_directory=gs://b/smoke steps=5; " +
           script + " run_name=llama base_output_directory=gs://b/runs dataset_type=grain enable_checkpointing=false";
  const Plan first = Run(job, workload::WorkloadKind::kJob);
  ASSERT_TRUE(first.changed) << (first.warnings.empty() ? "" : first.warnings[0]);
  ASSERT_EQ(first.resume.checkpoint_dir, "gs://b/runs/llama/checkpoints") << first.resume.why;

  const Plan second = Run(first.mutated, workload::WorkloadKind::kJob);
  EXPECT_FALSE(second.changed) << second.patch.dump();
  EXPECT_EQ(second.mutated, first.mutated);
  EXPECT_EQ(second.resume.checkpoint_dir, first.resume.checkpoint_dir) << second.resume.why;
}

// A restarted child Job of a checkpointed JobSet whose value learned from another namespace:
// admitted again as the API server stores it, the pinned value is its own, and the
// learned-from it was given stays (found by the admission fuzzer).
TEST_F(PlannerTest, ReinvocationOfAPinnedRunKeepsWhereItsValueWasLearned) {
  json job = SeedJob();
  job["metadata"]["labels"] = {{"jobset.sigs.k8s.io/jobset-name", "llama"},
                               {"jobset.sigs.k8s.io/restart-attempt", "2"}};
  std::string& script = job["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  script += " run_name=llama base_output_directory=gs://bucket/runs dataset_type=grain grain_train_files=/data/c4/*.array_record";
  const Plan alone = Run(job, workload::WorkloadKind::kJob);
  ASSERT_FALSE(alone.demand_key.empty());
  history_.PutGrainTuning({{"metadata", {{"namespace", "team-b"}, {"name", "llama-b"}}},
                           {"spec", {{"tuningKey", "llama-b"}}},
                           {"status", {{"learned", {{"machineType", "ct6e-standard-4t"},
                                                    {"fedTokensPerSecondPerHost", 3000},
                                                    {"demandKey", alone.demand_key}}}}}});
  Policy shares_b;
  shares_b.learn_from.namespaces = {"team-b"};
  policies_ = workload::FixedPolicy(shares_b);
  const Plan first = Run(job, workload::WorkloadKind::kJob);
  ASSERT_EQ(first.outcome, PlanOutcome::kTuned) << (first.warnings.empty() ? "" : first.warnings[0]);
  ASSERT_EQ(first.learned_from, std::vector<std::string>{"team-b/llama-b"});
  ASSERT_TRUE(first.resume.pins_workers) << first.resume.why;

  const Plan second = Run(first.mutated, workload::WorkloadKind::kJob);
  EXPECT_FALSE(second.changed) << second.patch.dump();
  EXPECT_EQ(second.mutated, first.mutated);
  EXPECT_EQ(second.learned_from, first.learned_from);
}

TEST_F(PlannerTest, NoMinusOneNoChange) {
  json job = SeedJob();
  std::string& script = job["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  script.replace(script.find("=-1"), 3, "=8");
  Plan plan = Run(job, workload::WorkloadKind::kJob);
  EXPECT_FALSE(plan.changed);
  EXPECT_TRUE(plan.findings.empty());
}

json SmallJobSet() {
  return json::parse(R"({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "js"}, "spec": {"replicatedJobs": [{"name": "slice", "template": {"spec":
    {"template": {"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "ct5p-hightpu-4t"},
    "containers": [{"name": "t", "args": ["python3", "MaxText/train.py", "grain_worker_count=-1"]}]}}}}}]}})");
}

// The child Job the JobSet controller makes from a (mutated) JobSet for one restart attempt.
json ChildJob(const json& jobset, int attempt) {
  json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"},
              {"metadata", {{"name", "js-slice-0"}, {"namespace", "team-a"},
                            {"labels", {{"jobset.sigs.k8s.io/jobset-name", "js"},
                                        {workload::kRestartAttemptLabel, std::to_string(attempt)}}}}},
              {"spec", jobset["spec"]["replicatedJobs"][0]["template"]["spec"]}};
  job["spec"]["template"]["metadata"]["labels"][workload::kRestartAttemptLabel] = std::to_string(attempt);
  return job;
}

const json& Args(const json& object, const char* template_pointer) {
  return object.at(json::json_pointer(std::string(template_pointer) + "/spec/containers/0/args"));
}

// The JobSet's spec holds the first attempt's value (never -1), so that its pods start with
// graintune's value even when the webhook cannot answer for a restart.
TEST_F(PlannerTest, JobSetHoldsTheFirstAttemptsValueAndAnnotates) {
  const json jobset = SmallJobSet();
  Plan plan = Run(jobset, workload::WorkloadKind::kJobSet);
  ASSERT_EQ(plan.outcome, PlanOutcome::kTuned);
  const std::string value = std::to_string(plan.workers);
  const char* tmpl = "/spec/replicatedJobs/0/template/spec/template";
  EXPECT_EQ(Args(plan.mutated, tmpl)[2], "grain_worker_count=" + value);
  const json& meta = plan.mutated.at(json::json_pointer(std::string(tmpl) + "/metadata"));
  EXPECT_EQ(meta["labels"][workload::kManagedLabel], "true");
  EXPECT_EQ(meta["annotations"][workload::kWorkerCountAnnotation], value);
  EXPECT_EQ(meta["annotations"][workload::kAttemptAnnotation], "0");
  EXPECT_EQ(plan.mutated["metadata"]["annotations"][workload::kFirstAttemptAnnotation], value);
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_NE(plan.warnings.back().find("starts with this value if graintune cannot answer"),
            std::string::npos) << plan.warnings.back();
}

// Attempt 0's child Job keeps the value; a restart's Job re-picks it: the operator's
// recommendation when there is one, else a fresh decision, never the stale attempt-0 value
// kept by accident.
TEST_F(PlannerTest, AJobSetsRestartRepicksTheValueItsTemplateHolds) {
  const Plan jobset = Run(SmallJobSet(), workload::WorkloadKind::kJobSet);
  const int first = jobset.workers;

  const Plan attempt0 = Run(ChildJob(jobset.mutated, 0), workload::WorkloadKind::kJob);
  EXPECT_EQ(attempt0.outcome, PlanOutcome::kKeptAsWritten);
  EXPECT_FALSE(attempt0.changed);

  TuningHistory h;
  h.recommended_workers = first + 5;
  h.recommendation_attempt = 1;
  h.recommendation_reason = "data-bound at " + std::to_string(first);
  history_.Put("team-a", "js", h);
  const Plan attempt1 = Run(ChildJob(jobset.mutated, 1), workload::WorkloadKind::kJob);
  ASSERT_EQ(attempt1.outcome, PlanOutcome::kTuned);
  EXPECT_EQ(attempt1.workers, first + 5);
  EXPECT_EQ(Args(attempt1.mutated, "/spec/template")[2], "grain_worker_count=" + std::to_string(first + 5));
  EXPECT_EQ(attempt1.mutated["spec"]["template"]["metadata"]["annotations"][workload::kAttemptAnnotation], "1");
  // Its pods (made from the rewritten template) keep that value; a pod the webhook missed the
  // Job of (the template still holds attempt 0's value) is re-picked the same way.
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", attempt1.mutated["spec"]["template"]["metadata"]},
              {"spec", attempt1.mutated["spec"]["template"]["spec"]}};
  pod["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] = "js";
  const Plan same = Run(pod, workload::WorkloadKind::kPod);
  EXPECT_EQ(same.workers, first + 5);
  EXPECT_FALSE(same.changed) << same.patch;
  json missed = {{"apiVersion", "v1"}, {"kind", "Pod"},
                 {"metadata", ChildJob(jobset.mutated, 1)["spec"]["template"]["metadata"]},
                 {"spec", jobset.mutated["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]}};
  missed["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] = "js";
  const Plan repicked = Run(missed, workload::WorkloadKind::kPod);
  EXPECT_EQ(repicked.workers, first + 5);
  EXPECT_EQ(Args(repicked.mutated, "")[2], "grain_worker_count=" + std::to_string(first + 5));

  // Without a recommendation a restart is decided afresh (here: the same inputs, the same value)
  // and labelled with its own attempt.
  history_.Put("team-a", "js", TuningHistory{});
  const Plan fresh = Run(ChildJob(jobset.mutated, 2), workload::WorkloadKind::kJob);
  EXPECT_EQ(fresh.outcome, PlanOutcome::kTuned);
  EXPECT_EQ(fresh.workers, first);
  EXPECT_EQ(fresh.mutated["spec"]["template"]["metadata"]["annotations"][workload::kAttemptAnnotation], "2");
}

// SmallJobSet as a real pre-training run writes it: Grain input and checkpoints (MaxText's
// default) under gs://ckpt/<run_name>.
json CheckpointingJobSet(const std::string& name, const std::string& run_name) {
  json js = SmallJobSet();
  js["metadata"]["name"] = name;
  json& args = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["args"];
  for (const std::string& word : std::vector<std::string>{"dataset_type=grain", "base_output_directory=gs://ckpt",
                                 "run_name=" + run_name, "steps=1000"})
    args.push_back(word);
  return js;
}

// A run that checkpoints Grain's iterator keeps its first attempt's value at every restart,
// whatever the operator recommends: a resume with another count stops MaxText early.
TEST_F(PlannerTest, ARestartOfARunThatResumesGrainsIteratorKeepsItsValue) {
  const Plan jobset = Run(CheckpointingJobSet("js", "pretrain"), workload::WorkloadKind::kJobSet);
  ASSERT_EQ(jobset.outcome, PlanOutcome::kTuned);
  EXPECT_TRUE(jobset.resume.pins_workers);
  EXPECT_EQ(jobset.resume.checkpoint_dir, "gs://ckpt/pretrain/checkpoints");
  ASSERT_FALSE(jobset.warnings.empty());
  EXPECT_NE(jobset.warnings.back().find("every restart keeps it"), std::string::npos) << jobset.warnings.back();
  const int first = jobset.workers;
  // A reinvocation of the webhook on the JobSet it already set changes nothing, and says nothing.
  const Plan again = Run(jobset.mutated, workload::WorkloadKind::kJobSet);
  EXPECT_EQ(again.outcome, PlanOutcome::kKeptAsWritten);
  EXPECT_FALSE(again.changed);
  EXPECT_TRUE(again.warnings.empty());
  // What graintune read of the run is its result, not an input a JobSet's child Jobs carry.
  for (const char* result : {workload::kResumeAnnotation, workload::kCheckpointDirAnnotation,
                             workload::kStepsAnnotation, workload::kFailedPodsCountedAnnotation})
    EXPECT_FALSE(workload::IsInputAnnotation(result)) << result;
  const json& tmpl_annotations =
      jobset.mutated["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["annotations"];
  EXPECT_EQ(tmpl_annotations[workload::kResumeAnnotation], "pins-workers");
  EXPECT_EQ(tmpl_annotations[workload::kCheckpointDirAnnotation], "gs://ckpt/pretrain/checkpoints");
  EXPECT_EQ(tmpl_annotations[workload::kStepsAnnotation], "1000");

  TuningHistory h;
  h.recommended_workers = first + 5;
  h.recommendation_attempt = 1;
  h.recommendation_reason = "data-bound at " + std::to_string(first);
  history_.Put("team-a", "js", h);
  // No run recorded yet: the value the restart's template holds.
  const Plan restart = Run(ChildJob(jobset.mutated, 1), workload::WorkloadKind::kJob);
  ASSERT_EQ(restart.outcome, PlanOutcome::kTuned);
  EXPECT_EQ(restart.workers, first);
  EXPECT_EQ(Args(restart.mutated, "/spec/template")[2], "grain_worker_count=" + std::to_string(first));
  EXPECT_NE(restart.reason.find("attempt 1 keeps " + std::to_string(first) + " workers"), std::string::npos)
      << restart.reason;
  // The run recorded (by the operator) wins over a template that says otherwise.
  h.runs["gs://ckpt/pretrain/checkpoints"] = {first + 1, 0};
  h.next_run_workers = first + 5;
  history_.Put("team-a", "js", h);
  const Plan recorded = Run(ChildJob(jobset.mutated, 2), workload::WorkloadKind::kJob);
  EXPECT_EQ(recorded.workers, first + 1);
  EXPECT_NE(recorded.reason.find("the next run of this workload gets " + std::to_string(first + 5)),
            std::string::npos) << recorded.reason;
}

// A new workload resuming a directory another workload's run wrote gets that run's value; a new
// directory of the same workload starts with the next run's value.
TEST_F(PlannerTest, ANewWorkloadResumingAKnownDirectoryGetsItsRunsValue) {
  TuningHistory older;
  older.runs["gs://ckpt/pretrain/checkpoints"] = {7, 0};
  older.next_run_workers = 11;
  older.next_run_reason = "measured";
  history_.Put("team-a", "first-submission", older);
  const Plan resumed = Run(CheckpointingJobSet("second-submission", "pretrain"), workload::WorkloadKind::kJobSet);
  EXPECT_EQ(resumed.workers, 7);
  history_.Put("team-a", "first-submission", older);
  history_.Put("team-a", "js", older);
  const Plan next_run = Run(CheckpointingJobSet("js", "pretrain-2"), workload::WorkloadKind::kJobSet);
  EXPECT_EQ(next_run.workers, 11);
  EXPECT_NE(next_run.reason.find("first attempt of run gs://ckpt/pretrain-2/checkpoints"), std::string::npos)
      << next_run.reason;
  // Another namespace's run is not this one's.
  history_.Put("team-b", "other", older);
  const Plan elsewhere = PlanWorkerCount(CheckpointingJobSet("z", "pretrain"), workload::WorkloadKind::kJobSet,
                                         "team-c", PlannerSources{shapes_, history_, configmaps_, policies_});
  EXPECT_NE(elsewhere.workers, 7);
}

// With checkpointing off, a restart is re-picked as before.
TEST_F(PlannerTest, ARunWithoutCheckpointsIsRepickedAtARestart) {
  json js = CheckpointingJobSet("js", "pretrain");
  js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["args"].push_back(
      "enable_checkpointing=false");
  const Plan jobset = Run(js, workload::WorkloadKind::kJobSet);
  EXPECT_FALSE(jobset.resume.pins_workers);
  EXPECT_NE(jobset.warnings.back().find("each restart is re-picked"), std::string::npos);
  TuningHistory h;
  h.recommended_workers = jobset.workers + 5;
  h.recommendation_attempt = 1;
  history_.Put("team-a", "js", h);
  EXPECT_EQ(Run(ChildJob(jobset.mutated, 1), workload::WorkloadKind::kJob).workers, jobset.workers + 5);
}

// A Job whose init container is a smoke run without checkpoints, before a trainer that
// checkpoints Grain's iterator: each container decides for itself, the trainer for the run.
json SmokeThenTrainJob() {
  return json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "smoke", "namespace": "team-a"},
    "spec": {"template": {"spec": {
      "nodeSelector": {"node.kubernetes.io/instance-type": "ct5p-hightpu-4t"},
      "initContainers": [{"name": "smoke", "command": ["bash", "-c",
        "python3 -m maxtext.trainers.pre_train.train base.yml steps=2 enable_checkpointing=False dataset_type=grain grain_worker_count=-1"]}],
      "containers": [{"name": "trainer", "args": ["python3", "-m", "maxtext.trainers.pre_train.train",
        "base.yml", "dataset_type=grain", "base_output_directory=gs://ckpt", "run_name=r1",
        "grain_worker_count=-1"]}]}}}})");
}

TEST_F(PlannerTest, AnInitContainersSmokeRunNeverDecidesForTheTrainer) {
  const Plan plan = Run(SmokeThenTrainJob(), workload::WorkloadKind::kJob);
  ASSERT_EQ(plan.outcome, PlanOutcome::kTuned);
  EXPECT_TRUE(plan.resume.pins_workers) << plan.resume.why;
  EXPECT_EQ(plan.resume.checkpoint_dir, "gs://ckpt/r1/checkpoints");
  ASSERT_EQ(plan.findings.size(), 2u);
  for (const Finding& f : plan.findings) {
    EXPECT_EQ(f.resume.pins_workers, f.container == "trainer") << f.container << ": " << f.resume.why;
    if (f.container == "smoke") {
      EXPECT_NE(f.resume.why.find("checkpointing is off"), std::string::npos);
    }
  }
  EXPECT_EQ(plan.mutated["spec"]["template"]["metadata"]["annotations"][workload::kCheckpointDirAnnotation],
            "gs://ckpt/r1/checkpoints");
  // The value rule follows the trainer: its run's recorded value, for both containers.
  TuningHistory h;
  h.runs["gs://ckpt/r1/checkpoints"] = {7, 0};
  h.recommended_workers = 20;
  h.recommendation_attempt = 1;
  history_.Put("team-a", "other-workload", h);
  const Plan resumed = Run(SmokeThenTrainJob(), workload::WorkloadKind::kJob);
  EXPECT_EQ(resumed.workers, 7) << resumed.reason;
  for (const Finding& f : resumed.findings) EXPECT_EQ(f.value, 7);
}

TEST_F(PlannerTest, AnAheadOfTimeCompileReplicatedJobNeverDecidesForTheTrainer) {
  json js = CheckpointingJobSet("aot-then-train", "pretrain");
  json compile = js["spec"]["replicatedJobs"][0];
  compile["name"] = "compile";
  compile["template"]["spec"]["template"]["spec"]["containers"][0]["args"] =
      json::array({"python3", "-m", "maxtext.trainers.pre_train.train_compile", "base.yml",
                   "compile_topology=v5p-8", "dataset_type=grain", "grain_worker_count=-1"});
  js["spec"]["replicatedJobs"].insert(js["spec"]["replicatedJobs"].begin(), compile);
  const Plan plan = Run(js, workload::WorkloadKind::kJobSet);
  ASSERT_EQ(plan.outcome, PlanOutcome::kTuned);
  EXPECT_TRUE(plan.resume.pins_workers) << plan.resume.why;
  EXPECT_EQ(plan.resume.checkpoint_dir, "gs://ckpt/pretrain/checkpoints");
  ASSERT_EQ(plan.findings.size(), 2u);
  EXPECT_FALSE(plan.findings[0].resume.pins_workers);
  EXPECT_NE(plan.findings[0].resume.why.find("train_compile"), std::string::npos);
  EXPECT_TRUE(plan.findings[1].resume.pins_workers);
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_NE(plan.warnings.back().find("every restart keeps it"), std::string::npos) << plan.warnings.back();
}

// A checkpointed run whose training count is the user's and whose eval count is -1: MaxText's
// checkpoints hold no eval iterator, so the eval count is free to change at a restart.
TEST_F(PlannerTest, AnEvalOnlyMinusOneOfACheckpointedRunMayChange) {
  json job = SeedJob();
  std::string& script = job["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  script.replace(script.find("grain_worker_count=-1"), 21,
                 "grain_worker_count=4 grain_worker_count_eval=-1 dataset_type=grain "
                 "grain_train_files=/data/c4/*.array_record grain_eval_files=/data/v/*.array_record "
                 "eval_interval=100 run_name=r base_output_directory=gs://b/runs");
  const Plan plan = Run(job, workload::WorkloadKind::kJob);
  ASSERT_EQ(plan.outcome, PlanOutcome::kTuned) << (plan.warnings.empty() ? "" : plan.warnings[0]);
  EXPECT_FALSE(plan.resume.pins_workers) << plan.resume.why;
  EXPECT_NE(plan.resume.why.find("eval"), std::string::npos) << plan.resume.why;
  ASSERT_EQ(plan.findings.size(), 1u);
  EXPECT_EQ(plan.findings[0].key, "grain_worker_count_eval");
  EXPECT_FALSE(plan.findings[0].resume.pins_workers);
  EXPECT_EQ(plan.mutated["metadata"]["annotations"][workload::kResumeAnnotation], "free");

  // Both counts at -1: the training iterator is restored, the run keeps its value.
  json both = SeedJob();
  std::string& both_script = both["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  both_script += " grain_worker_count_eval=-1 dataset_type=grain grain_train_files=/data/c4/*.array_record "
                 "grain_eval_files=/data/v/*.array_record eval_interval=100 run_name=r base_output_directory=gs://b/runs";
  EXPECT_TRUE(Run(both, workload::WorkloadKind::kJob).resume.pins_workers);
}

TEST_F(PlannerTest, NeverAValueMaxTextRefuses) {
  json hf = SmallJobSet();
  json& args = hf["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["args"];
  args.push_back("dataset_type=hf");
  args.push_back("hf_path=allenai/c4");
  const Plan capped = Run(hf, workload::WorkloadKind::kJobSet);
  ASSERT_EQ(capped.outcome, PlanOutcome::kTuned);
  EXPECT_EQ(capped.workers, 1);
  EXPECT_NE(capped.reason.find("at most 1 worker for dataset_type=hf"), std::string::npos) << capped.reason;

  // Parquet files over 2 slices x 4 hosts: the files per host, from the annotation.
  json parquet = SmallJobSet();
  json& rj = parquet["spec"]["replicatedJobs"][0];
  rj["replicas"] = 2;
  rj["template"]["spec"]["parallelism"] = 4;
  json& pargs = rj["template"]["spec"]["template"]["spec"]["containers"][0]["args"];
  for (const char* w : {"dataset_type=grain", "grain_file_type=parquet", "grain_train_files=gs://b/*.parquet"})
    pargs.push_back(w);
  const Plan unknown = Run(parquet, workload::WorkloadKind::kJobSet);
  EXPECT_EQ(unknown.outcome, PlanOutcome::kLeftToMaxText);
  EXPECT_FALSE(unknown.changed);
  ASSERT_FALSE(unknown.warnings.empty());
  EXPECT_NE(unknown.warnings.back().find("graintune.dev/data-files"), std::string::npos) << unknown.warnings.back();
  parquet["metadata"]["annotations"][workload::kDataFilesAnnotation] = "24";
  const Plan known = Run(parquet, workload::WorkloadKind::kJobSet);
  ASSERT_EQ(known.outcome, PlanOutcome::kTuned) << (known.warnings.empty() ? "" : known.warnings.back());
  EXPECT_EQ(known.workers, 3);  // 24 files / 8 hosts
  const json& tmpl = known.mutated["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"];
  EXPECT_EQ(tmpl["annotations"][workload::kDataHostsAnnotation], "8");
  // The child Job of a restart knows its hosts from the template, not its own parallelism.
  const Plan child = Run(ChildJob(known.mutated, 1), workload::WorkloadKind::kJob);
  EXPECT_EQ(child.workers, 3) << child.reason;
  // A bad annotation is a warning, and the value is left to MaxText.
  parquet["metadata"]["annotations"][workload::kDataFilesAnnotation] = "lots";
  const Plan bad = Run(parquet, workload::WorkloadKind::kJobSet);
  EXPECT_EQ(bad.outcome, PlanOutcome::kLeftToMaxText);
  EXPECT_NE(bad.warnings.front().find("data-files"), std::string::npos) << bad.warnings.front();
}

TEST_F(PlannerTest, DecisionUsesThePrimaryTemplatesOwnAnnotations) {
  json jobset = json::parse(R"({"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet",
    "metadata": {"name": "two"}, "spec": {"replicatedJobs": [
    {"name": "a", "template": {"spec": {"template": {
      "metadata": {"annotations": {"graintune.dev/tokens-per-second-per-worker": "1000"}},
      "spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "ct5p-hightpu-4t"},
      "containers": [{"name": "t", "args": ["MaxText/train.py", "grain_worker_count=-1"]}]}}}}},
    {"name": "b", "template": {"spec": {"template": {
      "metadata": {"annotations": {"graintune.dev/tokens-per-second-per-worker": "8000"}},
      "spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "ct5p-hightpu-4t"},
      "containers": [{"name": "t", "args": ["MaxText/train.py", "grain_worker_count=-1"]}]}}}}}]}})");
  Plan plan = Run(jobset, workload::WorkloadKind::kJobSet);
  ASSERT_TRUE(plan.decision);
  // The value comes from replicatedJob "a": its container and its annotations together.
  EXPECT_EQ(plan.decision->per_worker_tokens_per_second, 1000);
}

TEST_F(PlannerTest, HistoryRecommendationWinsForTheAttempt) {
  TuningHistory h;
  h.recommended_workers = 13;
  h.recommendation_attempt = 1;
  h.recommendation_reason = "data-bound at 4";
  history_.Put("team-a", "llama", h);
  Plan plan = Run(SeedJob(), workload::WorkloadKind::kJob);
  EXPECT_EQ(plan.workers, 13);
  EXPECT_NE(plan.reason.find("attempt 1"), std::string::npos);
}

TEST_F(PlannerTest, ManagedPodGetsTheCurrentValue) {
  Plan job = Run(SeedJob(), workload::WorkloadKind::kJob);
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", job.mutated["spec"]["template"].value("metadata", json::object())},
              {"spec", job.mutated["spec"]["template"]["spec"]}};
  pod["metadata"]["labels"]["batch.kubernetes.io/job-name"] = "llama";
  // No newer recommendation: the pod keeps what its Job got.
  EXPECT_FALSE(Run(pod, workload::WorkloadKind::kPod).changed);
  TuningHistory h;
  h.recommended_workers = job.workers + 5;
  history_.Put("team-a", "llama", h);
  Plan retried = Run(pod, workload::WorkloadKind::kPod);
  ASSERT_TRUE(retried.changed);
  const std::string script = retried.mutated["spec"]["containers"][0]["command"][2];
  EXPECT_NE(script.find("grain_worker_count=" + std::to_string(job.workers + 5)), std::string::npos);
}

// xpk's create-pathways JobSet: the trainer runs in the pathways-head Job on the cpu-np pool
// (limits 24 cpu / 100G, no chips); the TPU workers run only Pathways servers. The head's Job is
// tuned from its own host, not deferred waiting for a TPU host it will never have.
TEST_F(PlannerTest, XpkPathwaysHeadJobIsTunedOnItsCpuHost) {
  const json head = json::parse(R"({
    "apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": "pw-pathways-head-0", "namespace": "team-a",
                 "labels": {"jobset.sigs.k8s.io/jobset-name": "pw",
                            "jobset.sigs.k8s.io/replicatedjob-name": "pathways-head"}},
    "spec": {"template": {"spec": {
      "nodeSelector": {"cloud.google.com/gke-nodepool": "cpu-np"},
      "initContainers": [{"name": "pathways-proxy", "args": ["--server_port=29000"], "restartPolicy": "Always",
                          "resources": {"limits": {"cpu": "16", "memory": "100G"}}}],
      "containers": [{"name": "jax-tpu",
        "command": ["bash", "-c", "python3 -m MaxText.train MaxText/configs/base.yml grain_worker_count=-1"],
        "resources": {"limits": {"cpu": "24", "memory": "100G"}}}]}}}
  })");
  Plan plan = Run(head, workload::WorkloadKind::kJob);
  ASSERT_TRUE(plan.changed) << (plan.warnings.empty() ? "" : plan.warnings.back());
  EXPECT_EQ(plan.outcome, PlanOutcome::kTuned);
  EXPECT_DOUBLE_EQ(plan.host.cpu_cores, 24);
  EXPECT_EQ(plan.host.tpu_chips, 0);
  EXPECT_GE(plan.workers, 1);
  EXPECT_LE(plan.workers, 24);
  const std::string script = plan.mutated["spec"]["template"]["spec"]["containers"][0]["command"][2];
  EXPECT_NE(script.find("grain_worker_count=" + std::to_string(plan.workers)), std::string::npos) << script;
}

TEST_F(PlannerTest, NoHostShapeFailsOpenWithWarning) {
  json job = SeedJob();
  job["spec"]["template"]["spec"].erase("nodeSelector");
  Plan plan = Run(job, workload::WorkloadKind::kJob);
  EXPECT_FALSE(plan.changed);
  ASSERT_FALSE(plan.warnings.empty());
  EXPECT_NE(plan.warnings.back().find("no TPU host shape"), std::string::npos);
  EXPECT_NE(plan.warnings.back().find("its pods are tuned when created"), std::string::npos);

  // Kueue admits it and adds its flavor's node labels; the Job controller's pod still says -1
  // and is tuned at its creation.
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", {{"name", "llama-x"}, {"namespace", "team-a"},
                            {"labels", {{"batch.kubernetes.io/job-name", "llama"}}}}},
              {"spec", SeedJob()["spec"]["template"]["spec"]}};
  Plan admitted = Run(pod, workload::WorkloadKind::kPod);
  ASSERT_TRUE(admitted.changed);
  EXPECT_GT(admitted.workers, 0);
  pod["spec"].erase("nodeSelector");
  Plan still_unknown = Run(pod, workload::WorkloadKind::kPod);
  EXPECT_FALSE(still_unknown.changed);
  EXPECT_NE(still_unknown.warnings.back().find("MaxText picks for -1"), std::string::npos);
}

}  // namespace
}  // namespace graintune::webhook

namespace graintune::webhook {
namespace {

class ExporterPlannerTest : public PlannerTest {
 protected:
  Plan RunWithExporter(const json& object, workload::WorkloadKind kind) {
    return PlanWorkerCount(object, kind, "team-a",
                           PlannerSources{shapes_, history_, configmaps_, policies_}, &exporter_);
  }
  ExporterInjection exporter_;
};

TEST_F(ExporterPlannerTest, TunedJobGetsANativeSidecarAndAMetricsFile) {
  Plan plan = RunWithExporter(SeedJob(), workload::WorkloadKind::kJob);
  ASSERT_TRUE(plan.changed);
  const json& spec = plan.mutated["spec"]["template"]["spec"];
  ASSERT_EQ(spec["initContainers"].size(), 2u);  // graintune-launcher's installer, then the exporter
  const json& sidecar = spec["initContainers"][1];
  EXPECT_EQ(sidecar["name"], kExporterContainerName);
  EXPECT_EQ(sidecar["restartPolicy"], "Always");  // native sidecar: never keeps the Job alive
  EXPECT_EQ(sidecar["args"], json({"--metrics-file", "/graintune-metrics/metrics.jsonl", "--port", "9431",
                                     "--termination-message-path", "/dev/termination-log"}));
  const json& trainer = spec["containers"][0];
  EXPECT_EQ(trainer["env"][0], json({{"name", "M_METRICS_FILE"}, {"value", "/graintune-metrics/metrics.jsonl"}}));
  EXPECT_EQ(trainer["volumeMounts"][0]["name"], kMetricsVolumeName);
  EXPECT_EQ(spec["volumes"][0]["name"], kMetricsVolumeName);
  EXPECT_EQ(plan.mutated["spec"]["template"]["metadata"]["annotations"]["graintune.dev/exporter-port"], "9431");
  EXPECT_FALSE(spec.contains("shareProcessNamespace"));  // only when asked for

  Plan again = RunWithExporter(plan.mutated, workload::WorkloadKind::kJob);  // reinvocation
  EXPECT_FALSE(again.changed);
}

TEST_F(ExporterPlannerTest, AMetricsFileTheJobSetsIsNeverOverridden) {
  json job = SeedJob();
  std::string& script = job["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  script += " metrics_file=/tmp/mine.jsonl";
  Plan plan = RunWithExporter(job, workload::WorkloadKind::kJob);
  ASSERT_TRUE(plan.changed);  // the value is still set
  EXPECT_FALSE(plan.mutated["spec"]["template"]["spec"].contains("initContainers"));
  bool warned = false;
  for (const std::string& w : plan.warnings) warned |= w.find("metrics_file") != std::string::npos;
  EXPECT_TRUE(warned);
}

// A JobSet's templates carry the sidecar like a Job's (its pods are measured even when the
// webhook misses a restart), and its child Jobs do not get a second one.
TEST_F(ExporterPlannerTest, JobSetsGetTheSidecarOnceInTheirTemplates) {
  json js = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"},
             {"metadata", {{"name", "llama"}, {"namespace", "team-a"}}},
             {"spec", {{"replicatedJobs", {{{"name", "slice"}, {"template", {{"spec", SeedJob()["spec"]}}}}}}}}};
  Plan plan = RunWithExporter(js, workload::WorkloadKind::kJobSet);
  const json& init = plan.mutated["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["initContainers"];
  ASSERT_EQ(init.size(), 2u);  // graintune-launcher's installer (the start check), then the exporter
  EXPECT_EQ(init[1]["name"], kExporterContainerName);
  json child = {{"apiVersion", "batch/v1"}, {"kind", "Job"},
                {"metadata", {{"name", "llama-slice-0"}, {"namespace", "team-a"},
                              {"labels", {{"jobset.sigs.k8s.io/jobset-name", "llama"},
                                          {workload::kRestartAttemptLabel, "1"}}}}},
                {"spec", plan.mutated["spec"]["replicatedJobs"][0]["template"]["spec"]}};
  Plan restart = RunWithExporter(child, workload::WorkloadKind::kJob);
  EXPECT_EQ(restart.mutated["spec"]["template"]["spec"]["initContainers"].size(), 2u);
}

// spec.startCheck (on by default): every tuned trainer with a command of its own starts through
// graintune-launcher with the start check, which reports to the exporter; a lap's launcher does
// both; off, or without a command of its own, the command is left as written and plan says why.
TEST_F(ExporterPlannerTest, EveryTunedTrainerWithItsOwnCommandStartsThroughTheStartCheck) {
  const json job = SeedJob();
  const Plan plan = RunWithExporter(job, workload::WorkloadKind::kJob);
  ASSERT_EQ(plan.outcome, PlanOutcome::kTuned);
  EXPECT_NE(plan.start_check.find("jax-tpu starts through graintune-launcher with the start check"),
            std::string::npos) << plan.start_check;
  const json& spec = plan.mutated["spec"]["template"]["spec"];
  ASSERT_EQ(spec["initContainers"].size(), 2u);
  EXPECT_EQ(spec["initContainers"][0]["name"], kLauncherInstallerName);  // it runs first
  EXPECT_EQ(spec["initContainers"][1]["name"], kExporterContainerName);
  for (const json& v : spec["volumes"]) EXPECT_NE(v["name"], kLapValueVolumeName);  // no lap, no answer
  json expected = json::array({"/graintune-launcher/graintune-launcher",
                               "--admission-value=" + std::to_string(plan.workers),
                               "--start-check-report=/graintune-metrics/start-check.json", "--"});
  for (json word : job["spec"]["template"]["spec"]["containers"][0]["command"]) expected.push_back(word);
  std::string& script = expected.back().get_ref<std::string&>();
  script.replace(script.find("=-1"), 3, "=" + std::to_string(plan.workers));
  EXPECT_EQ(spec["containers"][0]["command"], expected);
  EXPECT_FALSE(RunWithExporter(plan.mutated, workload::WorkloadKind::kJob).changed);  // reinvocation

  Policy unchecked;
  unchecked.start_check = false;
  policies_ = workload::FixedPolicy(unchecked);
  const Plan off = RunWithExporter(job, workload::WorkloadKind::kJob);
  ASSERT_EQ(off.outcome, PlanOutcome::kTuned);
  EXPECT_TRUE(off.start_check.empty()) << off.start_check;
  EXPECT_EQ(off.mutated["spec"]["template"]["spec"]["initContainers"].size(), 1u);  // the exporter
  EXPECT_EQ(off.mutated["spec"]["template"]["spec"]["containers"][0]["command"][0], "bash");
  policies_ = workload::FixedPolicy(Policy{});

  const Plan entrypoint = RunWithExporter(CheckpointingJobSet("js", "pretrain"), workload::WorkloadKind::kJobSet);
  ASSERT_EQ(entrypoint.outcome, PlanOutcome::kTuned);
  EXPECT_NE(entrypoint.start_check.find("no command of its own"), std::string::npos) << entrypoint.start_check;
}

// A -1 graintune cannot rewrite (a sourced file may set any key) is left as written, and the
// trainer starts through the start check, which starts it with admission's value within what
// MaxText accepts (docs/start-check.md); without the check (or without the exporter that hears
// it), MaxText picks it, as before.
TEST_F(ExporterPlannerTest, AMinusOneGraintuneCannotRewriteIsFilledAtTheStartCheck) {
  json job = SeedJob();
  std::string& script = job["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  script = ". /etc/cfg/env.sh; " + script;
  const Plan plan = RunWithExporter(job, workload::WorkloadKind::kJob);
  ASSERT_EQ(plan.outcome, PlanOutcome::kLeftToStartCheck) << plan.reason;
  ASSERT_GT(plan.workers, 0);
  ASSERT_FALSE(plan.findings.empty());
  bool filled = false;
  for (const Finding& f : plan.findings) {
    EXPECT_EQ(f.value, -1);
    EXPECT_FALSE(f.left.empty());
    filled |= f.start_fill == std::optional<int>(plan.workers);
  }
  EXPECT_TRUE(filled);
  const json& trainer = plan.mutated["spec"]["template"]["spec"]["containers"][0];
  const json expected_head = json::array({"/graintune-launcher/graintune-launcher",
                                          "--admission-value=" + std::to_string(plan.workers),
                                          "--start-check-report=/graintune-metrics/start-check.json",
                                          "--start-check-fill=" + std::to_string(plan.workers), "--", "bash", "-c"});
  ASSERT_GE(trainer["command"].size(), expected_head.size());
  for (size_t i = 0; i < expected_head.size(); ++i) EXPECT_EQ(trainer["command"][i], expected_head[i]) << i;
  EXPECT_EQ(trainer["command"].back(), script);  // the start itself is exactly as written
  EXPECT_EQ(plan.mutated["spec"]["template"]["metadata"]["annotations"][workload::kWorkerCountAnnotation],
            std::to_string(plan.workers));
  EXPECT_FALSE(RunWithExporter(plan.mutated, workload::WorkloadKind::kJob).changed);  // reinvocation

  Policy unchecked;
  unchecked.start_check = false;
  policies_ = workload::FixedPolicy(unchecked);
  const Plan off = RunWithExporter(job, workload::WorkloadKind::kJob);
  EXPECT_EQ(off.outcome, PlanOutcome::kLeftToMaxText);
  EXPECT_FALSE(off.changed);
  policies_ = workload::FixedPolicy(Policy{});
  const Plan no_exporter = Run(job, workload::WorkloadKind::kJob);
  EXPECT_EQ(no_exporter.outcome, PlanOutcome::kLeftToMaxText);
  EXPECT_FALSE(no_exporter.changed);
}

// A dataset_type graintune cannot read may be hf, where MaxText accepts at most 1 worker: no
// value is written into the start, and the start check, which reads the real dataset_type, fills
// the -1 within MaxText's limit.
TEST_F(ExporterPlannerTest, AnUnknownDatasetTypeLeavesTheValueToTheStartCheck) {
  json job = SeedJob();
  std::string& script = job["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  script += " dataset_type=$DATASET";
  const Plan plan = RunWithExporter(job, workload::WorkloadKind::kJob);
  ASSERT_EQ(plan.outcome, PlanOutcome::kLeftToStartCheck) << plan.reason;
  const json& trainer = plan.mutated["spec"]["template"]["spec"]["containers"][0];
  EXPECT_NE(trainer["command"].back().get<std::string>().find("grain_worker_count=-1"), std::string::npos);
  EXPECT_EQ(trainer["command"][3], "--start-check-fill=" + std::to_string(plan.workers));
  bool said = false;
  for (const std::string& w : plan.warnings) said |= w.find("the start check gives the trainer") != std::string::npos;
  EXPECT_TRUE(said);
}

// A JobSet's restart: the child Job carries its template's start check, with this attempt's value.
TEST_F(ExporterPlannerTest, ARestartsStartCheckFillsWithItsOwnAttemptsValue) {
  json js = {{"apiVersion", "jobset.x-k8s.io/v1alpha2"}, {"kind", "JobSet"},
             {"metadata", {{"name", "js"}, {"namespace", "team-a"}}},
             {"spec", {{"replicatedJobs", {{{"name", "slice"}, {"template", {{"spec", SeedJob()["spec"]}}}}}}}}};
  std::string& script = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
                          ["command"][2].get_ref<std::string&>();
  script = ". /etc/cfg/env.sh; " + script;
  const Plan plan = RunWithExporter(js, workload::WorkloadKind::kJobSet);
  ASSERT_EQ(plan.outcome, PlanOutcome::kLeftToStartCheck) << plan.reason;
  json child = ChildJob(plan.mutated, 1);
  json& command = child["spec"]["template"]["spec"]["containers"][0]["command"];
  command[1] = "--admission-value=999";  // as if attempt 0 had been given another value
  command[3] = "--start-check-fill=999";
  const Plan restart = RunWithExporter(child, workload::WorkloadKind::kJob);
  ASSERT_EQ(restart.outcome, PlanOutcome::kLeftToStartCheck) << restart.reason;
  const json& wrapped = restart.mutated["spec"]["template"]["spec"]["containers"][0]["command"];
  EXPECT_EQ(wrapped[1], "--admission-value=" + std::to_string(restart.workers));
  EXPECT_EQ(wrapped[3], "--start-check-fill=" + std::to_string(restart.workers));
  EXPECT_EQ(restart.mutated["spec"]["template"]["spec"]["initContainers"].size(), 2u);  // once
}

// A JobSet's template carries the start check's launcher; its child Jobs keep it, once.
TEST_F(ExporterPlannerTest, AJobSetsChildJobsKeepTheirTemplatesStartCheckOnce) {
  json js = CheckpointingJobSet("js", "pretrain");
  json& c = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0];
  c["command"] = c["args"];
  c.erase("args");
  const Plan plan = RunWithExporter(js, workload::WorkloadKind::kJobSet);
  ASSERT_EQ(plan.outcome, PlanOutcome::kTuned);
  const Plan restart = RunWithExporter(ChildJob(plan.mutated, 1), workload::WorkloadKind::kJob);
  ASSERT_EQ(restart.outcome, PlanOutcome::kTuned);
  EXPECT_NE(restart.start_check.find("its template carries graintune-launcher"), std::string::npos)
      << restart.start_check;
  const json& spec = restart.mutated["spec"]["template"]["spec"];
  EXPECT_EQ(spec["initContainers"].size(), 2u);
  EXPECT_FALSE(restart.mutated["spec"]["template"]["metadata"].value("annotations", json::object())
                   .contains(kLapValueAnnotation));  // no lap, so no answer
}

// spec.lap Training: the first attempt of a run that keeps its value gets graintune-launcher
// around its trainer (a lap sized by LapSteps); its restarts get the answer "none" before they
// start; a run whose value may change, or a trainer graintune cannot wrap, gets none and says why.
class LapPlannerTest : public ExporterPlannerTest {
 protected:
  void SetUp() override {
    Policy laps;
    laps.lap.mode = LapPolicy::Mode::kTraining;
    laps.lap.steps = 100;        // the lap's mechanics; its cost cap has its own test
    laps.lap.max_run_share = 1;
    policies_ = workload::FixedPolicy(laps);
  }
  static json WithCommand(json jobset) {  // the trainer's argv as its command, not its image's
    json& c = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0];
    c["command"] = c["args"];
    c.erase("args");
    return jobset;
  }
  static constexpr char kTemplate[] = "/spec/replicatedJobs/0/template/spec/template";
};

TEST_F(LapPlannerTest, TheFirstAttemptOfARunThatKeepsItsValueRunsALapAndItsRestartsDoNot) {
  const Plan jobset = RunWithExporter(WithCommand(CheckpointingJobSet("js", "pretrain")),
                                      workload::WorkloadKind::kJobSet);
  ASSERT_EQ(jobset.outcome, PlanOutcome::kTuned);
  EXPECT_NE(jobset.lap.find("a practice lap of "), std::string::npos) << jobset.lap;
  const json& spec = jobset.mutated.at(json::json_pointer(std::string(kTemplate) + "/spec"));
  ASSERT_EQ(spec["initContainers"].size(), 2u);
  EXPECT_EQ(spec["initContainers"][0]["name"], kLauncherInstallerName);
  EXPECT_EQ(spec["initContainers"][1]["name"], kExporterContainerName);
  const json& command = spec["containers"][0]["command"];
  EXPECT_EQ(command[0], "/graintune-launcher/graintune-launcher");
  EXPECT_NE(std::find(command.begin(), command.end(), "--admission-value=" + std::to_string(jobset.workers)),
            command.end());
  EXPECT_NE(std::find(command.begin(), command.end(), "--lap-schedule-steps=1000"), command.end());
  EXPECT_FALSE(RunWithExporter(jobset.mutated, workload::WorkloadKind::kJobSet).changed);  // reinvocation
  const Plan first_child = RunWithExporter(ChildJob(jobset.mutated, 0), workload::WorkloadKind::kJob);
  EXPECT_NE(first_child.lap.find("its template carries graintune-launcher"), std::string::npos) << first_child.lap;
  EXPECT_EQ(first_child.mutated["spec"]["template"]["spec"]["initContainers"].size(), 2u);

  const Plan restart = RunWithExporter(ChildJob(jobset.mutated, 1), workload::WorkloadKind::kJob);
  ASSERT_EQ(restart.outcome, PlanOutcome::kTuned);
  EXPECT_EQ(restart.mutated["spec"]["template"]["metadata"]["annotations"][kLapValueAnnotation],
            "none: attempt 1 continues its run");
  EXPECT_EQ(restart.lap, "no practice lap: attempt 1 continues its run");
  EXPECT_EQ(restart.mutated["spec"]["template"]["spec"]["initContainers"].size(), 2u);  // not twice
}

// The policy's cap on a lap's cost (lap.maxRunShare, 3% of the run's steps unless set): a lap
// sized over it is not run, and the reason says what it would have cost; one within it runs, and
// says its cost in steps, seconds and chip-hours.
TEST_F(LapPlannerTest, ALapOverThePolicysShareOfTheRunIsRefusedAndSaysWhatItWouldCost) {
  Policy capped;
  capped.lap.mode = LapPolicy::Mode::kTraining;
  capped.lap.steps = 200;
  policies_ = workload::FixedPolicy(capped);
  const Plan refused = RunWithExporter(WithCommand(CheckpointingJobSet("js", "pretrain")), workload::WorkloadKind::kJobSet);
  ASSERT_EQ(refused.outcome, PlanOutcome::kTuned);
  EXPECT_EQ(refused.lap.rfind("no practice lap: it would cost 20.0% of the run's 1000 steps, about ", 0), 0u)
      << refused.lap;
  EXPECT_NE(refused.lap.find("over the policy's lap.maxRunShare of 3.0% (30 steps)"), std::string::npos) << refused.lap;
  EXPECT_NE(LauncherRoleOf(refused.mutated.at(json::json_pointer(std::string(kTemplate) + "/spec"))),
            LauncherRole::kLap);

  capped.lap.steps = 30;
  policies_ = workload::FixedPolicy(capped);
  const Plan within = RunWithExporter(WithCommand(CheckpointingJobSet("js", "pretrain")), workload::WorkloadKind::kJobSet);
  EXPECT_EQ(within.lap.rfind("a practice lap of 30 steps with ", 0), 0u) << within.lap;
  EXPECT_NE(within.lap.find("(3.0% of the run's 1000 steps, about "), std::string::npos) << within.lap;
  EXPECT_NE(within.lap.find(" chip-hours of the slice's "), std::string::npos) << within.lap;
  EXPECT_EQ(LauncherRoleOf(within.mutated.at(json::json_pointer(std::string(kTemplate) + "/spec"))),
            LauncherRole::kLap);
}

TEST_F(LapPlannerTest, NoLapWhereItCannotSizeTheRunsValueOrCannotWrapTheTrainer) {
  const Plan may_change = RunWithExporter(SeedJob(), workload::WorkloadKind::kJob);
  ASSERT_EQ(may_change.outcome, PlanOutcome::kTuned);
  EXPECT_NE(may_change.lap.find("no practice lap: the value may change"), std::string::npos) << may_change.lap;
  // The exporter and the start check's launcher (no lap: no answer volume).
  EXPECT_EQ(may_change.mutated["spec"]["template"]["spec"]["initContainers"].size(), 2u);
  EXPECT_EQ(LauncherRoleOf(may_change.mutated["spec"]["template"]["spec"]), LauncherRole::kStartCheck);

  const Plan entrypoint = RunWithExporter(CheckpointingJobSet("js", "pretrain"), workload::WorkloadKind::kJobSet);
  EXPECT_NE(entrypoint.lap.find("no command of its own"), std::string::npos) << entrypoint.lap;

  const Plan unmeasured = Run(WithCommand(CheckpointingJobSet("js", "pretrain")), workload::WorkloadKind::kJobSet);
  EXPECT_NE(unmeasured.lap.find("no exporter"), std::string::npos) << unmeasured.lap;

  policies_ = workload::FixedPolicy(Policy{});
  const Plan off = RunWithExporter(WithCommand(CheckpointingJobSet("js", "pretrain")), workload::WorkloadKind::kJobSet);
  EXPECT_TRUE(off.lap.empty()) << off.lap;
  EXPECT_EQ(LauncherRoleOf(off.mutated.at(json::json_pointer(std::string(kTemplate) + "/spec"))),
            LauncherRole::kStartCheck);
}

}  // namespace
}  // namespace graintune::webhook

namespace graintune::webhook {
namespace {

TuningHistory MeasuredThenRecommended() {
  TuningHistory h;
  Trial t;
  t.attempt = 0;
  t.workers = 4;
  t.samples = 20;
  h.trials = {t};
  h.recommended_workers = 9;
  h.recommendation_attempt = 1;
  h.recommendation_reason = "jump";
  return h;
}

json JobOfAttempt(int attempt) {
  json job = SeedJob();
  job["metadata"]["labels"]["jobset.sigs.k8s.io/jobset-name"] = "llama";
  job["metadata"]["labels"]["jobset.sigs.k8s.io/restart-attempt"] = std::to_string(attempt);
  return job;
}

TEST(PlannerAttemptsTest, AutoGivesANewAttemptTheRecommendationAndALatePodItsAttemptsValue) {
  workload::MachineTypeTableShapes shapes;
  workload::InMemoryHistory history;
  history.Put("team-a", "llama", MeasuredThenRecommended());
  workload::InMemoryConfigMaps configmaps;
  workload::FixedPolicy policy;
  PlannerSources sources{shapes, history, configmaps, policy};
  Plan next = PlanWorkerCount(JobOfAttempt(1), workload::WorkloadKind::kJob, "team-a", sources);
  EXPECT_EQ(next.workers, 9);
  EXPECT_EQ(next.attempt, 1);
  EXPECT_EQ(next.mutated["metadata"]["annotations"][workload::kAttemptAnnotation], "1");
  Plan late = PlanWorkerCount(JobOfAttempt(0), workload::WorkloadKind::kJob, "team-a", sources);
  EXPECT_EQ(late.workers, 4);  // all pods of one attempt get one value
}

// A pod its controller made from a template graintune set to 4 workers for attempt 0: managed,
// annotated, its script saying 4.
json PodAdmittedWithFourForAttemptZero(const std::string& name, json labels) {
  labels[workload::kManagedLabel] = "true";
  json pod = {{"apiVersion", "v1"}, {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", "team-a"}, {"labels", labels},
                            {"annotations", {{workload::kWorkerCountAnnotation, "4"}, {workload::kAttemptAnnotation, "0"}}}}},
              {"spec", SeedJob()["spec"]["template"]["spec"]}};
  std::string& script = pod["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  script.replace(script.find("=-1"), 3, "=4");
  return pod;
}

class FixedFailures : public workload::JobStatusSource {
 public:
  explicit FixedFailures(int n) : n_(n) {}
  std::optional<int> FailedPods(const std::string&, const std::string&) override { return n_; }

 private:
  int n_;
};

TEST(PlannerAttemptsTest, APlainJobsPodRetryIsTheNextAttempt) {
  workload::MachineTypeTableShapes shapes;
  workload::InMemoryHistory history;
  history.Put("team-a", "llama", MeasuredThenRecommended());
  workload::InMemoryConfigMaps configmaps;
  workload::FixedPolicy policy;
  // The pod the Job controller makes from its template (admitted for attempt 0) after one
  // pod of the Job failed.
  const json pod = PodAdmittedWithFourForAttemptZero("llama-x", {{"batch.kubernetes.io/job-name", "llama"}});
  FixedFailures one(1);
  Plan retry = PlanWorkerCount(pod, workload::WorkloadKind::kPod, "team-a",
                               PlannerSources{shapes, history, configmaps, policy, &one});
  EXPECT_EQ(retry.workers, 9);
  EXPECT_EQ(retry.mutated["metadata"]["annotations"][workload::kAttemptAnnotation], "1");
  // The webhook is reinvoked on the pod it just patched: the failure is not counted again.
  Plan reinvoked = PlanWorkerCount(retry.mutated, workload::WorkloadKind::kPod, "team-a",
                                   PlannerSources{shapes, history, configmaps, policy, &one});
  EXPECT_FALSE(reinvoked.changed) << reinvoked.patch;
  EXPECT_EQ(reinvoked.mutated["metadata"]["annotations"][workload::kAttemptAnnotation], "1");
  FixedFailures none(0);
  Plan first = PlanWorkerCount(pod, workload::WorkloadKind::kPod, "team-a",
                               PlannerSources{shapes, history, configmaps, policy, &none});
  EXPECT_EQ(first.workers, 4);  // no failure yet: a pod of attempt 0 keeps attempt 0's value
}

// Kueue preempts a running workload (its pods are deleted, nothing failed) and re-admits it
// later: the pods come back naming the attempt that was measured. Once the operator has seen
// that attempt end, they are a new run with the recommended value; before, a late pod of a
// running attempt keeps that attempt's value.
TEST(PlannerAttemptsTest, ARunOfAnEndedAttemptIsTheRecommendedAttempt) {
  workload::MachineTypeTableShapes shapes;
  workload::InMemoryHistory history;
  TuningHistory h = MeasuredThenRecommended();
  h.ended_attempts = {0};
  history.Put("team-a", "llama", h);
  workload::InMemoryConfigMaps configmaps;
  workload::FixedPolicy policy;
  PlannerSources sources{shapes, history, configmaps, policy};

  // The child Job recreated for the same restart attempt (or a resubmitted JobSet's first).
  Plan job = PlanWorkerCount(JobOfAttempt(0), workload::WorkloadKind::kJob, "team-a", sources);
  EXPECT_EQ(job.workers, 9);
  EXPECT_EQ(job.attempt, 1);
  EXPECT_EQ(job.mutated["metadata"]["annotations"][workload::kAttemptAnnotation], "1");
  EXPECT_EQ(job.reason.rfind("its attempt 0 had ended, so this is a new run or a re-admission; the workload's history (status.trials) files it as attempt 1. attempt 1: jump", 0), 0u) << job.reason;

  // A pod of the resumed Job: its template still says attempt 0 and 4 workers.
  const json pod = PodAdmittedWithFourForAttemptZero(
      "llama-0-0-x", {{"jobset.sigs.k8s.io/jobset-name", "llama"}, {workload::kRestartAttemptLabel, "0"}});
  Plan resumed = PlanWorkerCount(pod, workload::WorkloadKind::kPod, "team-a", sources);
  ASSERT_TRUE(resumed.changed);
  EXPECT_EQ(resumed.workers, 9);
  EXPECT_EQ(resumed.mutated["metadata"]["annotations"][workload::kAttemptAnnotation], "1");
  EXPECT_EQ(workload::AttemptOf(resumed.mutated["metadata"]), 1);  // what the operator will read
  // Reinvocation changes nothing.
  EXPECT_FALSE(PlanWorkerCount(resumed.mutated, workload::WorkloadKind::kPod, "team-a", sources).changed);
  EXPECT_FALSE(PlanWorkerCount(job.mutated, workload::WorkloadKind::kJob, "team-a", sources).changed);

  // Not ended yet: the same pod is a late pod of attempt 0 and keeps its value.
  history.Put("team-a", "llama", MeasuredThenRecommended());
  Plan late = PlanWorkerCount(pod, workload::WorkloadKind::kPod, "team-a", sources);
  EXPECT_EQ(late.workers, 4);
  EXPECT_EQ(late.attempt, 0);
  // A JobSet itself is never renumbered by this rule (its child Jobs are).
  EXPECT_EQ(PlanWorkerCount(JobOfAttempt(1), workload::WorkloadKind::kJob, "team-a", sources).attempt, 1);
}

TEST(PlannerAttemptsTest, InitialModeKeepsTheFirstAttemptsValue) {
  workload::MachineTypeTableShapes shapes;
  workload::InMemoryHistory history;
  history.Put("team-a", "llama", MeasuredThenRecommended());
  workload::InMemoryConfigMaps configmaps;
  Policy initial;
  initial.mode = Mode::kInitial;
  workload::FixedPolicy policy(initial);
  Plan next = PlanWorkerCount(JobOfAttempt(1), workload::WorkloadKind::kJob, "team-a",
                              PlannerSources{shapes, history, configmaps, policy});
  EXPECT_EQ(next.workers, 4);
  EXPECT_NE(next.reason.find("policy mode Initial"), std::string::npos) << next.reason;
}

// Many -1s in one script are rewritten in one rebuild of the string (each used to copy and
// rescan the whole script: 40k took 13.6 s). All of them get the value, nothing else moves.
TEST_F(PlannerTest, ThousandsOfSitesInOneScriptAreAllRewritten) {
  json job = SeedJob();
  std::string& script = job["spec"]["template"]["spec"]["containers"][0]["command"][2].get_ref<std::string&>();
  std::string many;
  for (int i = 0; i < 10000; ++i) many += " grain_worker_count=-1 x" + std::to_string(i);
  script += many;
  Plan plan = Run(job, workload::WorkloadKind::kJob);
  ASSERT_TRUE(plan.changed);
  EXPECT_EQ(plan.findings.size(), 10001u);
  const std::string rewritten =
      plan.mutated["spec"]["template"]["spec"]["containers"][0]["command"][2].get<std::string>();
  const std::string value = "grain_worker_count=" + std::to_string(plan.workers);
  size_t count = 0;
  for (size_t at = rewritten.find(value); at != std::string::npos; at = rewritten.find(value, at + 1)) ++count;
  EXPECT_EQ(count, 10001u);
  EXPECT_EQ(rewritten.find("grain_worker_count=-1"), std::string::npos);
  EXPECT_NE(rewritten.find(" x9999"), std::string::npos);
  EXPECT_EQ(job.patch(plan.patch), plan.mutated);
}

}  // namespace
}  // namespace graintune::webhook

namespace graintune::webhook {
namespace {

// A reinvoked JobSet whose templates graintune set is left as written, also when its key has a
// recommendation for a later attempt (the admission fuzzer's seed that found the run's
// annotations copied to the Job metadata on the second pass).
TEST_F(PlannerTest, AReinvokedJobSetWithHistoryIsLeftAsWritten) {
  TuningHistory h;
  Trial t0, t1;
  t0.attempt = 0;
  t0.workers = 4;
  t1.attempt = 1;
  t1.workers = 6;
  h.trials = {t0, t1};
  h.recommended_workers = 7;
  h.recommendation_attempt = 2;
  h.ended_attempts = {0};
  history_.Put("team-a", "js", h);
  json js = SmallJobSet();
  js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["args"].push_back(
      "enable_checkpointing=false");
  const Plan first = Run(js, workload::WorkloadKind::kJobSet);
  ASSERT_EQ(first.outcome, PlanOutcome::kTuned);
  const Plan again = Run(first.mutated, workload::WorkloadKind::kJobSet);
  EXPECT_FALSE(again.changed) << again.patch.dump();
}

}  // namespace
}  // namespace graintune::webhook
