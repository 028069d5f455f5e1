#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <fstream>
#include <sstream>

#include "cli/commands.h"

namespace graintune::cli {
namespace {

using nlohmann::json;

json Explain(const std::string& example) {
  std::ostringstream out, err;
  std::istringstream in;
  const int code = RunExplain({std::string(GRAINTUNE_EXAMPLES_DIR) + "/" + example, "--output", "json"},
                              in, out, err);
  EXPECT_EQ(code, 0) << err.str();
  return code == 0 ? json::parse(out.str()) : json::array();
}

TEST(ExplainCommandTest, LlamaJobSetHoldsItsFirstAttemptsValueForWhenTheWebhookIsDown) {
  json report = Explain("llama3-8b-v6e-32-jobset.yaml");
  ASSERT_EQ(report.size(), 1u);
  const json& e = report[0];
  EXPECT_EQ(e["object"], "JobSet default/llama3-8b-v6e-32");
  EXPECT_EQ(e["outcome"], "Tuned");
  ASSERT_EQ(e["found"].size(), 1u);
  EXPECT_EQ(e["found"][0]["where"], "script");
  EXPECT_EQ(e["found"][0]["before"], "-1");
  const int workers = e["workers"];
  EXPECT_GT(workers, 4);  // 4 workers starve a v6e host on this job
  // The template's script holds the first attempt's value (restarts re-pick it), the JobSet
  // names it, and the pod template carries the exporter. (The script moves within the command:
  // graintune-launcher now starts it, with the start check.)
  bool script = false, announced = false, sidecar = false;
  for (const json& op : e["patch"]) {
    const std::string path = op["path"];
    if (path.find("/containers/0/command/") != std::string::npos && op["value"].is_string())
      script = script || op["value"].get<std::string>().find("grain_worker_count=" + std::to_string(workers) + " ") !=
                             std::string::npos;
    if (path == "/metadata/annotations/graintune.dev~1first-attempt-worker-count")
      announced = op["value"] == std::to_string(workers);
    if (path.find("/initContainers") != std::string::npos) sidecar = true;
  }
  EXPECT_TRUE(script) << e["patch"];
  EXPECT_TRUE(announced) << e["patch"];
  EXPECT_TRUE(sidecar) << e["patch"];
  EXPECT_EQ(e["host"]["tpu_chips"], 4);
}

TEST(ExplainCommandTest, ConfigMapConfigGetsInjectedOverridesForTrainAndEval) {
  json report = Explain("v5e-job-configmap.yaml");
  ASSERT_EQ(report.size(), 1u);
  const json& e = report[0];
  ASSERT_EQ(e["found"].size(), 2u);
  EXPECT_EQ(e["found"][0]["where"], "configmap");
  // Annotated profile: 3k tok/s/worker; eval gets a quarter.
  EXPECT_EQ(e["eval_workers"].get<int>(), (e["workers"].get<int>() + 3) / 4);
  std::set<std::string> added;  // into the argv: its args, or its command once the launcher folds them in
  for (const json& op : e["patch"])
    if ((op["path"].get<std::string>().find("/args/") != std::string::npos ||
         op["path"].get<std::string>().find("/command/") != std::string::npos) && op["value"].is_string())
      added.insert(op["value"].get<std::string>());
  EXPECT_TRUE(added.count("grain_worker_count=" + std::to_string(e["workers"].get<int>())));
}

TEST(ExplainCommandTest, EnvOverrideIsRewrittenInPlace) {
  json e = Explain("v5p-job-env.yaml")[0];
  ASSERT_EQ(e["found"].size(), 1u);
  EXPECT_EQ(e["found"][0]["where"], "env");
  bool env_replaced = false;
  for (const json& op : e["patch"]) {
    if (op["path"] == "/spec/template/spec/containers/0/env/0/value") {
      env_replaced = op["op"] == "replace" && op["value"] == std::to_string(e["workers"].get<int>());
    }
    EXPECT_FALSE(op.contains("value") && op["value"].is_string() &&
                 op["value"].get<std::string>().starts_with("grain_worker_count="))
        << "no argv twin: " << op;
  }
  EXPECT_TRUE(env_replaced);
}

TEST(ExplainCommandTest, AnnotationOnlyInjectsEnv) {
  json e = Explain("annotation-only-pod.yaml")[0];
  ASSERT_EQ(e["found"].size(), 1u);
  EXPECT_EQ(e["found"][0]["where"], "annotation");
  bool added = false;
  for (const json& op : e["patch"])
    added = added || (op["path"] == "/spec/containers/0/env" && op["value"][0]["name"] == "M_GRAIN_WORKER_COUNT");
  EXPECT_TRUE(added) << e["patch"];
}

TEST(ExplainCommandTest, BadFilesAreClearErrors) {
  std::ostringstream out, err;
  std::istringstream in;
  EXPECT_EQ(RunExplain({"/nonexistent.yaml"}, in, out, err), 2);
  EXPECT_NE(err.str().find("cannot read"), std::string::npos);
  EXPECT_EQ(RunExplain({}, in, out, err), 2);
  EXPECT_EQ(RunExplain({std::string(GRAINTUNE_EXAMPLES_DIR) + "/v5p-job-env.yaml", "--machine-type", "x"}, in, out, err), 2);
}

struct ExplainRun {
  int code;
  std::string out, err;
};

ExplainRun ExplainWith(const Args& args, const std::string& stdin_text = "") {
  std::ostringstream out, err;
  std::istringstream in(stdin_text);
  const int code = RunExplain(args, in, out, err);
  return {code, out.str(), err.str()};
}

std::string Example(const std::string& name) { return std::string(GRAINTUNE_EXAMPLES_DIR) + "/" + name; }

std::string Slurp(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(ExplainCommandTest, StdinSeveralFilesAndDashFAreOneStream) {
  const ExplainRun files = ExplainWith({Example("v5p-job-env.yaml"), "-f", Example("annotation-only-pod.yaml"), "-o", "json"});
  ASSERT_EQ(files.code, 0) << files.err;
  const json both = json::parse(files.out);
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0]["file"], Example("v5p-job-env.yaml"));
  EXPECT_EQ(both[1]["file"], Example("annotation-only-pod.yaml"));

  const ExplainRun piped = ExplainWith({"-", "-o", "json"}, Slurp(Example("v5p-job-env.yaml")) + "\n---\n" +
                                                        Slurp(Example("annotation-only-pod.yaml")));
  ASSERT_EQ(piped.code, 0) << piped.err;
  const json streamed = json::parse(piped.out);
  ASSERT_EQ(streamed.size(), 2u);
  EXPECT_EQ(streamed[0]["file"], "stdin");
  for (size_t i = 0; i < 2; ++i) EXPECT_EQ(streamed[i]["patch"], both[i]["patch"]) << i;

  EXPECT_EQ(ExplainWith({"-", "-f", "-"}).code, 2);
  const ExplainRun none = ExplainWith({});
  EXPECT_EQ(none.code, 2);
  EXPECT_NE(none.err.find("no manifest given"), std::string::npos) << none.err;
}

TEST(ExplainCommandTest, TunedObjectsGetTheExporterAsTheWebhookAddsIt) {
  const json with = json::parse(ExplainWith({Example("v5p-job-env.yaml"), "-o", "json"}).out)[0];
  bool sidecar = false;
  for (const json& op : with["patch"])
    if (op["path"] == "/spec/template/spec/initContainers")
      for (const json& c : op["value"])
        sidecar = sidecar || (c["name"] == "graintune-exporter" && c["restartPolicy"] == "Always");
  EXPECT_TRUE(sidecar) << with["patch"];
  const json without = json::parse(ExplainWith({Example("v5p-job-env.yaml"), "--no-exporter", "-o", "json"}).out)[0];
  for (const json& op : without["patch"])
    EXPECT_EQ(op["path"].get<std::string>().find("initContainers"), std::string::npos) << op;
  EXPECT_EQ(with["workers"], without["workers"]);
}

TEST(ExplainCommandTest, PoliciesComeFromTheInputOrPolicyFilesElseTheChartsDefault) {
  const std::string job = Slurp(Example("v5p-job-env.yaml"));
  // Without a policy: the chart's default one.
  const json plain = json::parse(ExplainWith({"-", "-o", "json"}, job).out)[0];
  EXPECT_EQ(plain["policy"], "GrainTunePolicy graintune-cluster-default");
  EXPECT_EQ(plain["outcome"], "Tuned");

  // A policy in the same stream, mode Off: recommend only, nothing patched.
  const std::string off = R"(apiVersion: graintune.dev/v1alpha1
kind: GrainTunePolicy
metadata: {name: hands-off}
spec: {mode: "Off"}
)";
  const ExplainRun off_run = ExplainWith({"-"}, off + "---\n" + job);
  ASSERT_EQ(off_run.code, 0) << off_run.err;
  EXPECT_NE(off_run.out.find("recommend only (policy mode Off): nothing changed; graintune would set"),
            std::string::npos) << off_run.out;
  EXPECT_EQ(off_run.out.find("  patch "), std::string::npos) << off_run.out;

  // The same from --policy FILE; a --policy file without a policy is an error.
  const json from_file = json::parse(ExplainWith({"-", "--policy", Example("policies.yaml"), "-o", "json"}, job).out)[0];
  EXPECT_EQ(from_file["policy"], "GrainTunePolicy cluster-default");
  const ExplainRun no_policy = ExplainWith({"-", "--policy", Example("v5p-job-env.yaml")}, job);
  EXPECT_EQ(no_policy.code, 2);
  EXPECT_NE(no_policy.err.find("no GrainTunePolicy in it"), std::string::npos) << no_policy.err;
}

TEST(ExplainCommandTest, AQueuedWorkloadWithoutHostsIsDeferredNotIgnored) {
  const ExplainRun run = ExplainWith({Example("kueue-suspended-job.yaml")});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("tuning deferred: grain_worker_count=-1 found"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("no grain_worker_count=-1 to tune"), std::string::npos) << run.out;
  const json e = json::parse(ExplainWith({Example("kueue-suspended-job.yaml"), "-o", "json"}).out)[0];
  EXPECT_EQ(e["outcome"], "Deferred");
  EXPECT_TRUE(e["patch"].empty());
  // Once Kueue has admitted it onto v6e hosts (here: assumed with --machine-type), it is tuned.
  const json admitted = json::parse(
      ExplainWith({Example("kueue-suspended-job.yaml"), "--machine-type", "v6e-4", "-o", "json"}).out)[0];
  EXPECT_EQ(admitted["outcome"], "Tuned");
  EXPECT_GT(admitted["workers"].get<int>(), 0);
}

}  // namespace
}  // namespace graintune::cli

namespace graintune::cli {
namespace {

// A checkpointed Grain run, with the GrainTuning the operator wrote for it.
constexpr char kPinnedRun[] = R"(apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: pretrain, namespace: ml}
spec:
  replicatedJobs:
  - name: slice
    template:
      spec:
        template:
          spec:
            nodeSelector: {cloud.google.com/gke-tpu-accelerator: tpu-v6e-slice, cloud.google.com/gke-tpu-topology: 4x8}
            containers:
            - name: maxtext
              command: [bash, -c, "python3 -m MaxText.train MaxText/configs/base.yml model_name=llama3-8b dataset_type=grain base_output_directory=gs://b/runs run_name=pretrain steps=1000 grain_worker_count=-1"]
              resources: {limits: {google.com/tpu: 4}}
)";
constexpr char kItsTuning[] = R"(---
apiVersion: graintune.dev/v1alpha1
kind: GrainTuning
metadata: {name: pretrain, namespace: ml}
spec: {tuningKey: pretrain}
status:
  runs: [{checkpointDir: gs://b/runs/pretrain/checkpoints, workers: 6, firstAttempt: 0}]
  nextRun: {workers: 9, reason: measured}
  recommendation: {workers: 6, attempt: 2, reason: kept}
)";

json ExplainText(const std::string& manifests, std::vector<std::string> flags) {
  std::ostringstream out, err;
  std::istringstream in(manifests);
  std::vector<std::string> args = {"-", "-o", "json", "--no-exporter"};
  args.insert(args.end(), flags.begin(), flags.end());
  const int code = RunExplain(args, in, out, err);
  EXPECT_EQ(code, 0) << err.str();
  return code == 0 ? json::parse(out.str()) : json::array();
}

TEST(ExplainResumeTest, EveryTunedObjectSaysWhetherItsRunKeepsItsValue) {
  const json report = ExplainText(kPinnedRun, {});
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0]["resume"]["pins_workers"], true);
  EXPECT_EQ(report[0]["resume"]["checkpoint_dir"], "gs://b/runs/pretrain/checkpoints");
  EXPECT_TRUE(report[0]["resume"]["why"].is_string());
  std::string unpinned = kPinnedRun;
  unpinned.replace(unpinned.find("steps=1000"), 10, "steps=1000 enable_checkpointing=false");
  EXPECT_EQ(ExplainText(unpinned, {})[0]["resume"]["pins_workers"], false);
}

TEST(ExplainResumeTest, GrainTuningsInTheInputAreTheHistoryAndAttemptNShowsARestart) {
  const json report = ExplainText(std::string(kPinnedRun) + kItsTuning, {"--attempt", "2"});
  ASSERT_EQ(report.size(), 3u);  // the JobSet, its child Job for attempt 2, that Job's pod
  EXPECT_EQ(report[0]["workers"], 6) << "the recorded run's value";
  EXPECT_EQ(report[1]["object"], "Job ml/pretrain-slice-0 (attempt 2)");
  EXPECT_EQ(report[2]["object"], "Pod ml/pretrain-pod (attempt 2)");
  for (const json& e : report) EXPECT_EQ(e["workers"], 6) << e.dump();
  EXPECT_NE(report[2]["reason"].get<std::string>().find("attempt 2 keeps 6 workers; the next run of this workload gets 9"),
            std::string::npos) << report[2]["reason"];
  // Without the history, attempt 2 still keeps the value its templates hold.
  const json fresh = ExplainText(kPinnedRun, {"--attempt", "2"});
  ASSERT_EQ(fresh.size(), 3u);
  EXPECT_EQ(fresh[2]["workers"], fresh[0]["workers"]);
}

// A Job in team-b on one v6e host reading c4, and the policy covering team-b.
constexpr char kTeamBJob[] = R"(apiVersion: batch/v1
kind: Job
metadata: {name: llama-b, namespace: team-b, annotations: {graintune.dev/dataset: c4}}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {node.kubernetes.io/instance-type: ct6e-standard-4t}
      containers:
        - name: maxtext
          command: [python3, -m, MaxText.train, base.yml, model_name=llama3-8b, per_device_batch_size=2,
                    max_target_length=8192, grain_worker_count=-1]
          resources: {limits: {google.com/tpu: 4}}
---
apiVersion: graintune.dev/v1alpha1
kind: GrainTunePolicy
metadata: {name: team-b}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-b}}
)";

// What team-a's run learned (slow steps: a low fed throughput), under `demand_key`.
std::string TeamATuning(const std::string& demand_key) {
  return "---\n" + json{{"apiVersion", "graintune.dev/v1alpha1"}, {"kind", "GrainTuning"},
                        {"metadata", {{"namespace", "team-a"}, {"name", "llama-a"}}},
                        {"spec", {{"tuningKey", "llama-a"}, {"dataset", "c4"}}},
                        {"status", {{"learnedTokensPerSecondPerWorker", 6000},
                                    {"learned", {{"machineType", "ct6e-standard-4t"},
                                                 {"fedTokensPerSecondPerHost", 3000},
                                                 {"demandKey", demand_key}}}}}}.dump() + "\n";
}

TEST(ExplainLearningTest, EachObjectNamesItsDemandKeyAndTheNamespacesFiguresItLearnedFrom) {
  const json alone = ExplainText(kTeamBJob, {});
  ASSERT_EQ(alone.size(), 1u);
  const std::string key = alone[0]["demand_key"];
  EXPECT_EQ(key.substr(0, key.find(", settings ")), "llama3-8b batch 2 seq 8192, 4x v6e on ct6e-standard-4t");
  EXPECT_EQ(alone[0]["learned_from"], json::array());
  EXPECT_EQ(alone[0]["learning_spans"], "namespace team-b");

  // team-a's figures are not team-b's: the first pick does not move.
  const json unshared = ExplainText(std::string(kTeamBJob) + TeamATuning(key), {});
  EXPECT_EQ(unshared[0]["learned_from"], json::array());
  EXPECT_EQ(unshared[0]["workers"], alone[0]["workers"]);

  // The policy covering team-b shares team-a's.
  std::string sharing = kTeamBJob;
  sharing += "  learnFrom: {namespaces: [team-a]}\n";
  const json shared = ExplainText(sharing + TeamATuning(key), {});
  EXPECT_EQ(shared[0]["learned_from"], json::array({"team-a/llama-a"}));
  EXPECT_EQ(shared[0]["learning_spans"], "namespaces team-b, team-a");
  EXPECT_LT(shared[0]["workers"].get<int>(), alone[0]["workers"].get<int>()) << "slow steps need fewer workers";

  std::ostringstream out, err;
  std::istringstream in(sharing + TeamATuning(key));
  ASSERT_EQ(RunExplain({"-", "--no-exporter"}, in, out, err), 0) << err.str();
  EXPECT_NE(out.str().find("  demand  key " + key + "\n"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("  learned from GrainTuning team-a/llama-a (learning spans namespaces team-b, team-a)\n"),
            std::string::npos) << out.str();
}

TEST(ExplainResumeTest, ABadAttemptIsAUsageError) {
  std::ostringstream out, err;
  std::istringstream in(kPinnedRun);
  EXPECT_EQ(RunExplain({"-", "--attempt", "-3"}, in, out, err), 2);
  EXPECT_NE(err.str().find("attempt"), std::string::npos) << err.str();
}

// The shapes a container's own command, env and ConfigMaps decide, read from one input file.
constexpr char kEachContainerDecides[] = R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: run-flags, namespace: ml}
data:
  RUN_NAME: r9
  CKPT: "False"
---
apiVersion: batch/v1
kind: Job
metadata: {name: smoke-then-train, namespace: ml}
spec:
  template:
    spec:
      nodeSelector: {node.kubernetes.io/instance-type: ct5p-hightpu-4t}
      initContainers:
      - name: smoke
        envFrom: [{configMapRef: {name: run-flags}}]
        command: [bash, -c, "python3 -m maxtext.trainers.pre_train.train base.yml dataset_type=grain steps=2 enable_checkpointing=${CKPT:-true} grain_worker_count=-1"]
      containers:
      - name: trainer
        env:
        - name: RUN_NAME
          valueFrom: {configMapKeyRef: {name: run-flags, key: RUN_NAME}}
        command: [bash, -c, "ARGS=\"dataset_type=grain base_output_directory=gs://b/runs\"\npython3 -m maxtext.trainers.pre_train.train base.yml $ARGS run_name=$RUN_NAME grain_worker_count=-1"]
)";

TEST(ExplainResumeTest, EveryFoundSiteCarriesItsOwnContainersResume) {
  const json report = ExplainText(kEachContainerDecides, {});
  ASSERT_EQ(report.size(), 1u);
  const json& job = report[0];
  EXPECT_EQ(job["resume"]["pins_workers"], true) << job.dump(2);
  EXPECT_EQ(job["resume"]["checkpoint_dir"], "gs://b/runs/r9/checkpoints");
  ASSERT_EQ(job["found"].size(), 2u);
  for (const json& f : job["found"]) {
    ASSERT_TRUE(f.contains("resume")) << f.dump();
    for (const char* field : {"pins_workers", "checkpoint_dir", "why"}) EXPECT_TRUE(f["resume"].contains(field));
    if (f["container"] == "smoke") {
      EXPECT_EQ(f["resume"]["pins_workers"], false) << f.dump();  // CKPT=False from envFrom
    } else {
      EXPECT_EQ(f["resume"], job["resume"]);
    }
  }
}

TEST(ExplainResumeTest, WhatCannotBeReadHoldsTheValueAndSaysWhy) {
  std::string manifest = kEachContainerDecides;
  manifest.replace(manifest.find("run_name=$RUN_NAME"), 18, "run_name=$(date +%s)");
  const json report = ExplainText(manifest, {});
  ASSERT_EQ(report.size(), 1u);
  EXPECT_EQ(report[0]["resume"]["pins_workers"], true);
  EXPECT_EQ(report[0]["resume"]["checkpoint_dir"], "");
  // Bad input: a script that does not even close its quotes is read, never a crash.
  std::string broken = kEachContainerDecides;
  broken.replace(broken.find("$ARGS run_name"), 5, "\\\"${ARGS");  // YAML \" : a bash quote
  EXPECT_EQ(ExplainText(broken, {}).size(), 1u);
}

TEST(ExplainResumeTest, AnHfJobGetsOneWorkerAndParquetWithoutAFileCountKeepsMinusOne) {
  std::string hf = kPinnedRun;
  hf.replace(hf.find("dataset_type=grain"), 18, "dataset_type=hf hf_path=allenai/c4");
  EXPECT_EQ(ExplainText(hf, {})[0]["workers"], 1);
  std::string parquet = kPinnedRun;
  parquet.replace(parquet.find("dataset_type=grain"), 18,
                  "dataset_type=grain grain_file_type=parquet grain_train_files=gs://b/*.parquet");
  const json left = ExplainText(parquet, {})[0];
  EXPECT_EQ(left["outcome"], "LeftToMaxText");
  EXPECT_NE(left["reason"].get<std::string>().find("graintune.dev/data-files"), std::string::npos) << left.dump();
  EXPECT_TRUE(left["patch"].empty());
}

}  // namespace
}  // namespace graintune::cli
