#include "workload/run_resume.h"

#include <gtest/gtest.h>

namespace graintune::workload {
namespace {

using json = nlohmann::json;

// An xpk-style container: `bash -c` around MaxText with `words` on its command line.
json Container(const std::string& words, json env = json::array()) {
  return {{"name", "maxtext"},
          {"command", {"bash", "-c", "python3 -m MaxText.train MaxText/configs/base.yml " + words}},
          {"env", env}};
}

RunResume Read(const json& container, const ConfigValues* config = nullptr,
               const std::string& jobset = "") {
  const ContainerOverrides overrides = ScanContainer(container);
  std::string jobset_name = JobSetNameEnv(container).value_or("");
  if (jobset_name.empty() && JobSetNameEnv(container)) jobset_name = jobset;
  return ResumeOf({overrides, config, ViewOfConfig(overrides, config), jobset_name});
}

TEST(RunResumeTest, GrainWithMaxTextsDefaultsPinsTheValue) {
  const RunResume r = Read(Container(
      "dataset_type=grain run_name=llama base_output_directory=gs://b/out grain_worker_count=-1 steps=100"));
  EXPECT_TRUE(r.pins_workers);
  EXPECT_EQ(r.checkpoint_dir, "gs://b/out/llama/checkpoints");
  EXPECT_EQ(r.steps, 100);
  EXPECT_NE(r.why.find("checkpoints Grain's iterator"), std::string::npos) << r.why;
}

// A directory graintune cannot name is said to be unread, with the word that hides it.
TEST(RunResumeTest, ARunNameFromACommandSubstitutionHoldsAndSaysTheDirectoryIsUnread) {
  const RunResume r = Read(Container(
      "dataset_type=grain base_output_directory=gs://b/out run_name=run-$(hostname) grain_worker_count=-1"));
  EXPECT_TRUE(r.pins_workers);
  EXPECT_EQ(r.checkpoint_dir, "");
  EXPECT_NE(r.why.find("cannot read its directory (run_name"), std::string::npos) << r.why;
  EXPECT_NE(r.why.find("$(hostname)"), std::string::npos) << r.why;
}

TEST(RunResumeTest, CheckpointingOffFreesTheValue) {
  for (const char* off : {"false", "False", "0", "no", "off", "n"}) {
    const RunResume r = Read(Container(std::string("dataset_type=grain enable_checkpointing=") + off));
    EXPECT_FALSE(r.pins_workers) << off;
    EXPECT_NE(r.why.find("checkpointing is off"), std::string::npos) << r.why;
  }
}

TEST(RunResumeTest, TheElasticIteratorFreesTheValue) {
  const RunResume r = Read(Container("dataset_type=grain grain_use_elastic_iterator=true packing=false"));
  EXPECT_FALSE(r.pins_workers);
  EXPECT_NE(r.why.find("elastic"), std::string::npos);
}

TEST(RunResumeTest, ANonGrainInputFreesTheValue) {
  EXPECT_FALSE(Read(Container("dataset_type=hf grain_worker_count=-1")).pins_workers);
  // MaxText's default input is synthetic: a grain_worker_count alone does not make it Grain.
  EXPECT_FALSE(Read(Container("grain_worker_count=-1")).pins_workers);
}

TEST(RunResumeTest, TheEnvironmentCountsAndArgvWins) {
  json env = json::array({{{"name", "M_ENABLE_CHECKPOINTING"}, {"value", "false"}},
                          {{"name", "M_DATASET_TYPE"}, {"value", "grain"}}});
  EXPECT_FALSE(Read(Container("", env)).pins_workers);
  EXPECT_TRUE(Read(Container("enable_checkpointing=true", env)).pins_workers);
}

TEST(RunResumeTest, AnUnparseableBooleanHoldsTheValue) {
  const RunResume r = Read(Container("dataset_type=grain enable_checkpointing=maybe"));
  EXPECT_TRUE(r.pins_workers);
  EXPECT_NE(r.why.find("cannot read enable_checkpointing"), std::string::npos) << r.why;
}

TEST(RunResumeTest, AMountedConfigIsReadBelowTheOverrides) {
  const ConfigValues config = {{"dataset_type", "grain"},
                               {"enable_checkpointing", "False"},
                               {"base_output_directory", "/ckpt/"},
                               {"run_name", "from-yaml"}};
  json c = {{"name", "m"}, {"args", {"python3", "-m", "MaxText.train", "/etc/maxtext/my.yml"}}};
  RunResume r = Read(c, &config);
  EXPECT_FALSE(r.pins_workers);
  EXPECT_EQ(r.checkpoint_dir, "/ckpt/from-yaml/checkpoints");
  c["args"].push_back("enable_checkpointing=true");
  r = Read(c, &config);
  EXPECT_TRUE(r.pins_workers);
}

TEST(RunResumeTest, AConfigInTheImageHoldsTheValueUnlessTheCommandLineDecides) {
  json c = {{"name", "m"}, {"args", {"python3", "-m", "MaxText.train", "/app/configs/llama.yml"}}};
  RunResume r = Read(c);
  EXPECT_TRUE(r.pins_workers);
  EXPECT_NE(r.why.find("/app/configs/llama.yml"), std::string::npos) << r.why;
  EXPECT_EQ(r.checkpoint_dir, "");  // base_output_directory unknown
  c["args"].push_back("enable_checkpointing=false");
  EXPECT_FALSE(Read(c).pins_workers);
}

TEST(RunResumeTest, ABaseConfigGraintuneDoesNotFollowMakesTheRestUnknown) {
  const ConfigValues own_base = {{"base_config", "base.yml"}, {"dataset_type", "grain"}};
  json c = {{"name", "m"}, {"args", {"python3", "-m", "MaxText.train", "/etc/m/my.yml"}}};
  const RunResume defaults = Read(c, &own_base);
  EXPECT_TRUE(defaults.pins_workers);
  EXPECT_EQ(defaults.why.find("cannot read"), std::string::npos) << defaults.why;
  const ConfigValues other_base = {{"base_config", "team.yml"}, {"dataset_type", "grain"}};
  const RunResume unknown = Read(c, &other_base);
  EXPECT_TRUE(unknown.pins_workers);
  EXPECT_NE(unknown.why.find("cannot read enable_checkpointing"), std::string::npos) << unknown.why;
}

TEST(RunResumeTest, RunNameDefaultsToTheJobSetThenToTheStartMinute) {
  const std::string words = "dataset_type=grain base_output_directory=/out model_name=llama3-8b";
  // xpk: JOBSET_NAME from the JobSet's name.
  const json from_field = json::array(
      {{{"name", "JOBSET_NAME"},
        {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.annotations['jobset.sigs.k8s.io/jobset-name']"}}}}}}});
  EXPECT_EQ(Read(Container(words, from_field), nullptr, "pretrain").checkpoint_dir,
            "/out/pretrain/checkpoints");
  json env = json::array({{{"name", "JOBSET_NAME"}, {"value", "from-env"}}});
  EXPECT_EQ(Read(Container(words, env), nullptr, "pretrain").checkpoint_dir, "/out/from-env/checkpoints");
  // No JOBSET_NAME in the container: MaxText names the run by model and start minute.
  const RunResume minute = Read(Container(words), nullptr, "pretrain");
  EXPECT_EQ(minute.checkpoint_dir, "/out/llama3-8b_<start minute>/checkpoints");
  EXPECT_TRUE(minute.pins_workers);
  EXPECT_NE(minute.why.find("within that minute"), std::string::npos);
}

TEST(RunResumeTest, JsonHasTheFieldsExplainPrints) {
  const json j = ToJson(Read(Container("dataset_type=grain base_output_directory=/o run_name=r steps=7")));
  EXPECT_EQ(j["pins_workers"], true);
  EXPECT_EQ(j["checkpoint_dir"], "/o/r/checkpoints");
  EXPECT_EQ(j["steps"], 7);
  EXPECT_TRUE(j["why"].is_string());
}

TEST(RunResumeTest, HostileValuesHaveAnAnswer) {
  EXPECT_FALSE(Read(Container("dataset_type=grain steps=1e400")).steps.has_value());
  EXPECT_FALSE(Read(Container("dataset_type=grain steps=-3")).steps.has_value());
  EXPECT_TRUE(Read(Container("dataset_type=grain grain_use_elastic_iterator=sometimes")).pins_workers);
  EXPECT_FALSE(Read(Container("dataset_type=grain grain_use_elastic_iterator=yes")).pins_workers);
  EXPECT_EQ(JobSetNameEnv({{"env", {{{"name", "JOBSET_NAME"}, {"valueFrom", {}}}}}}), "");
  EXPECT_EQ(JobSetNameEnv({{"env", "not-a-list"}}), std::nullopt);
  EXPECT_EQ(JobSetNameEnv({{"env", {{{"name", 7}}, "x"}}}), std::nullopt);
  // An empty base_output_directory is MaxText's "maxtext_output".
  EXPECT_EQ(Read(Container("dataset_type=grain run_name=r")).checkpoint_dir, "maxtext_output/r/checkpoints");
}

TEST(RunResumeTest, EmergencyAndMultiTierCheckpointingSaveNoIterator) {
  for (const char* key : {"enable_emergency_checkpoint", "enable_multi_tier_checkpointing"}) {
    const RunResume r = Read(Container(std::string("dataset_type=grain local_checkpoint_directory=/l "
                                                   "local_checkpoint_period=5 ") + key + "=true"));
    EXPECT_FALSE(r.pins_workers) << key;
    EXPECT_NE(r.why.find("emergency checkpoint manager"), std::string::npos) << r.why;
    EXPECT_TRUE(Read(Container(std::string("dataset_type=grain ") + key + "=false")).pins_workers);
  }
}

TEST(RunResumeTest, EveryInputOtherThanGrainSavesNoIterator) {
  for (const char* type : {"hf", "tfds", "c4_mlperf", "olmo_grain", "synthetic"}) {
    const RunResume r = Read(Container(std::string("dataset_type=") + type));
    EXPECT_FALSE(r.pins_workers) << type;
    EXPECT_NE(r.why.find(std::string("dataset_type is ") + type), std::string::npos) << r.why;
  }
}

TEST(RunResumeTest, AheadOfTimeCompileNeverPinsButATrainerAfterItDoes) {
  const std::string words = "dataset_type=grain base_output_directory=/o run_name=r";
  for (const char* module :
       {"python3 -m maxtext.trainers.pre_train.train_compile", "python3 -m MaxText.train_compile",
        "python3 /app/src/MaxText/train_compile.py"}) {
    const json c = {{"name", "aot"}, {"command", {"bash", "-c", std::string(module) + " base.yml " + words}}};
    const RunResume r = Read(c);
    EXPECT_FALSE(r.pins_workers) << module;
    EXPECT_NE(r.why.find("train_compile"), std::string::npos) << r.why;
  }
  // A script that compiles and then trains is a trainer.
  const json both = {{"name", "m"},
                     {"command", {"bash", "-c",
                                  "python3 -m MaxText.train_compile base.yml " + words +
                                      " && python3 -m maxtext.trainers.pre_train.train base.yml " + words}}};
  EXPECT_TRUE(Read(both).pins_workers);
  const json script = {{"name", "m"}, {"args", {"python3", "/app/MaxText/train.py", "base.yml", "dataset_type=grain"}}};
  EXPECT_TRUE(Read(script).pins_workers);
}

TEST(RunResumeTest, ADirectoryWithAnUnexpandedVariableIsNoRun) {
  // A literal argv element reaches MaxText as written: "$RUN" is no directory graintune can name.
  const json c = {{"name", "m"},
                  {"args", {"python3", "-m", "MaxText.train", "base.yml", "dataset_type=grain",
                            "base_output_directory=gs://b/o", "run_name=$RUN_NAME"}}};
  const RunResume r = Read(c);
  EXPECT_TRUE(r.pins_workers);
  EXPECT_EQ(r.checkpoint_dir, "");
}

RunResume ReadScript(const std::string& script, json env = json::array()) {
  const json c = {{"name", "m"}, {"command", {"bash", "-c", script}}, {"env", env}};
  return Read(c);
}

TEST(RunResumeTest, ArgsInAVariableAreReadAsBashSplitsThem) {
  const RunResume r = ReadScript(
      "ARGS=\"dataset_type=grain base_output_directory=gs://b/runs\"; RUN_ID=r3\n"
      "python3 -m maxtext.trainers.pre_train.train base.yml $ARGS run_name=${RUN_ID}");
  EXPECT_TRUE(r.pins_workers) << r.why;
  EXPECT_EQ(r.checkpoint_dir, "gs://b/runs/r3/checkpoints");
}

TEST(RunResumeTest, AnUnseenVariableHoldsTheValueAndNamesNoRun) {
  const RunResume r = ReadScript(
      "ARGS=\"dataset_type=grain base_output_directory=gs://b/runs\"\n"
      "python3 -m maxtext.trainers.pre_train.train base.yml $ARGS run_name=${RUN_ID}");
  EXPECT_TRUE(r.pins_workers);
  EXPECT_EQ(r.checkpoint_dir, "");  // never recorded or matched as a run
  const RunResume any = ReadScript("python3 -m MaxText.train base.yml $EXTRA_ARGS");
  EXPECT_TRUE(any.pins_workers);
  EXPECT_NE(any.why.find("cannot read dataset_type"), std::string::npos) << any.why;
  EXPECT_NE(any.why.find("$EXTRA_ARGS"), std::string::npos) << any.why;
}

TEST(RunResumeTest, XpkRunNameFromTheContainersEnv) {
  const json env = json::array({{{"name", "RUN_NAME"}, {"value", "r9"}}});
  const RunResume r = ReadScript(
      "python3 -m MaxText.train base.yml dataset_type=grain base_output_directory=gs://b/o "
      "run_name=$RUN_NAME",
      env);
  EXPECT_TRUE(r.pins_workers);
  EXPECT_EQ(r.checkpoint_dir, "gs://b/o/r9/checkpoints");
}

TEST(RunResumeTest, ADefaultFilledFromTheContainersEnv) {
  const json env = json::array({{{"name", "CKPT"}, {"value", "False"}}});
  const RunResume r = ReadScript(
      "python3 -m MaxText.train base.yml dataset_type=grain enable_checkpointing=${CKPT:-true}", env);
  EXPECT_FALSE(r.pins_workers) << r.why;
}

TEST(RunResumeTest, ASmokeStartWithCheckpointingOffNeverFreesTheRunAfterIt) {
  const json c = {{"command", {"bash", "-c",
      "python3 -m maxtext.trainers.pre_train.train base.yml dataset_type=grain run_name=smoke "
      "enable_checkpointing=false base_output_directory=/tmp/s grain_worker_count=-1 && "
      "python3 -m maxtext.trainers.pre_train.train base.yml dataset_type=grain run_name=real "
      "base_output_directory=gs://b/runs grain_worker_count=-1"}}};
  const RunResume r = Read(c);
  EXPECT_TRUE(r.pins_workers);
  EXPECT_EQ(r.checkpoint_dir, "gs://b/runs/real/checkpoints");
  EXPECT_NE(r.why.find("start 2 of 2"), std::string::npos) << r.why;
}

TEST(RunResumeTest, AStartThatDoesNotSeeMinusOneDoesNotDecide) {
  const json c = {{"command", {"bash", "-c",
      "python3 -m MaxText.train base.yml dataset_type=grain run_name=a base_output_directory=gs://b grain_worker_count=4; "
      "python3 -m MaxText.train base.yml dataset_type=grain enable_checkpointing=false grain_worker_count=-1"}}};
  EXPECT_FALSE(Read(c).pins_workers);
}

// The API server's reinvocation sees the count graintune applied where -1 was: the start that
// holds it is judged as the start that held -1 was, and the start that never saw the value
// (MaxText's default count) is not (found by the admission fuzzer).
TEST(RunResumeTest, TheStartHoldingTheAppliedCountIsJudgedAsTheStartThatHeldMinusOne) {
  const std::string first = "python3 -m MaxText.train base.yml run_name=a base_output_directory=gs://b/one; ";
  const std::string second = "python3 -m MaxText.train base.yml dataset_type=grain run_name=b "
                             "base_output_directory=gs://b/two enable_checkpointing=false grain_worker_count=";
  const json written = {{"command", {"bash", "-c", first + second + "-1"}}};
  const json applied = {{"command", {"bash", "-c", first + second + "6"}}};
  const RunResume before = Read(written);
  ASSERT_FALSE(before.pins_workers) << before.why;
  ASSERT_EQ(before.checkpoint_dir, "gs://b/two/b/checkpoints");

  const ContainerOverrides overrides = ScanContainer(applied);
  RunResumeQuery query{overrides, nullptr, ViewOfConfig(overrides, nullptr), ""};
  query.applied_workers = 6;
  const RunResume again = ResumeOf(query);
  EXPECT_EQ(again.pins_workers, before.pins_workers) << again.why;
  EXPECT_EQ(again.checkpoint_dir, before.checkpoint_dir);
  EXPECT_EQ(again.why, before.why);
  // Without the applied count, neither start sees graintune's value: the whole script decides.
  EXPECT_NE(Read(applied).checkpoint_dir, before.checkpoint_dir);
}

TEST(RunResumeTest, TwoStartsRestoringFromTwoDirectoriesHoldWithNoDirectory) {
  const json c = {{"command", {"bash", "-c",
      "python3 -m MaxText.train base.yml dataset_type=grain run_name=a base_output_directory=gs://b grain_worker_count=-1; "
      "python3 -m MaxText.train base.yml dataset_type=grain run_name=b base_output_directory=gs://b grain_worker_count=-1"}}};
  const RunResume r = Read(c);
  EXPECT_TRUE(r.pins_workers);
  EXPECT_EQ(r.checkpoint_dir, "");
  EXPECT_NE(r.why.find("cannot tell"), std::string::npos) << r.why;
}

TEST(RunResumeTest, TheKubeletsExpansionOfArgsDecidesTheDataset) {
  const json c = json::parse(R"J({"command": ["python3", "-m", "maxtext.trainers.pre_train.train", "base.yml"],
    "env": [{"name": "RUN", "value": "r-kexp"}, {"name": "DS", "value": "grain"}],
    "args": ["dataset_type=$(DS)", "base_output_directory=gs://b/runs", "run_name=$(RUN)", "grain_worker_count=-1"]})J");
  const RunResume r = Read(c);
  EXPECT_TRUE(r.pins_workers) << r.why;
  EXPECT_EQ(r.checkpoint_dir, "gs://b/runs/r-kexp/checkpoints");
}

}  // namespace
}  // namespace graintune::workload
