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

}  // namespace
}  // namespace graintune::workload
