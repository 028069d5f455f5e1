#include "workload/container_overrides.h"

#include <gtest/gtest.h>

#include "workload/in_memory_sources.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

TEST(ContainerOverridesTest, ArgsScriptsAndEnv) {
  json c = json::parse(R"({
    "name": "jax-tpu",
    "command": ["bash", "-c", "echo start && python3 -m MaxText.train MaxText/configs/base.yml run_name=r1 grain_worker_count=-1 per_device_batch_size=2"],
    "env": [{"name": "M_MAX_TARGET_LENGTH", "value": "8192"}, {"name": "HOME", "value": "/"}]
  })");
  ContainerOverrides o = ScanContainer(c);
  EXPECT_TRUE(o.invokes_maxtext);
  EXPECT_EQ(*o.Value("grain_worker_count"), "-1");
  EXPECT_EQ(*o.Value("per_device_batch_size"), "2");
  EXPECT_EQ(*o.Value("max_target_length"), "8192");
  ASSERT_TRUE(o.config);
  EXPECT_EQ(o.config->path, "MaxText/configs/base.yml");
  EXPECT_EQ(o.config->location, OverrideLocation::kScript);
  for (const Override& ov : o.overrides) {
    if (ov.key != "grain_worker_count") continue;
    EXPECT_EQ(ov.pointer, "/command/2");
    EXPECT_EQ(c["command"][2].get<std::string>().substr(ov.value_begin, 2), "-1");
  }
}

TEST(ContainerOverridesTest, PlainArgvAndShellFlagVariants) {
  json c = json::parse(R"({"command": ["python3", "-m", "MaxText.train"],
                          "args": ["/cfg/x.yaml", "grain_worker_count_eval=-1"]})");
  ContainerOverrides o = ScanContainer(c);
  ASSERT_TRUE(o.config);
  EXPECT_EQ(o.config->pointer, "/args/0");
  EXPECT_EQ(o.overrides.at(0).pointer, "/args/1");
  json sh = json::parse(R"({"command": ["/bin/sh", "-ec"], "args": ["train grain_worker_count=-1"]})");
  EXPECT_EQ(ScanContainer(sh).overrides.at(0).location, OverrideLocation::kScript);
}

TEST(ContainerOverridesTest, EnvNames) {
  EXPECT_EQ(MaxTextKeyFromEnv("M_GRAIN_WORKER_COUNT"), "grain_worker_count");
  EXPECT_EQ(MaxTextKeyFromEnv("M_"), "");
  EXPECT_EQ(MaxTextKeyFromEnv("M_lower"), "");
  EXPECT_EQ(MaxTextKeyFromEnv("PATH"), "");
  EXPECT_EQ(EnvNameForKey("grain_worker_count_eval"), "M_GRAIN_WORKER_COUNT_EVAL");
}

TEST(ContainerOverridesTest, MalformedContainersYieldNothing) {
  EXPECT_TRUE(ScanContainer(json::parse(R"({"args": [1, null, {"a": 2}], "env": [3, {"name": 4}]})"))
                  .overrides.empty());
  EXPECT_TRUE(ScanContainer(json::array()).overrides.empty());
  EXPECT_TRUE(ScanContainer(json::parse(R"({"command": ["bash", "-c"]})")).overrides.empty());
}

ContainerOverrides ScanScript(const std::string& script, json env = json::array()) {
  const json c = {{"name", "m"}, {"command", {"bash", "-c", script}}, {"env", env}};
  const ContainerEnv resolved = ResolveContainerEnv(c, "ns", nullptr, "");
  return ScanContainer(c, &resolved);
}

TEST(ContainerOverridesTest, ScriptVariablesAreExpandedAndSplitAsBashDoes) {
  const std::string script =
      "ARGS=\"dataset_type=grain base_output_directory=gs://b/runs grain_worker_count=-1\"\n"
      "export RUN_ID=r7\n"
      "python3 -m maxtext.trainers.pre_train.train base.yml $ARGS run_name=${RUN_ID}";
  const ContainerOverrides o = ScanScript(script);
  EXPECT_EQ(o.Lookup("dataset_type").value, "grain");
  EXPECT_EQ(o.Lookup("base_output_directory").value, "gs://b/runs");
  EXPECT_EQ(o.Lookup("run_name").value, "r7");
  // ARGS is a shell variable, not a MaxText key.
  EXPECT_EQ(o.Lookup("args").kind, KeyState::Kind::kUnset);
  EXPECT_FALSE(o.HasKey("ARGS"));
  // The -1 inside ARGS is rewritten where it is written: in the assignment.
  for (const Override& ov : o.overrides)
    if (ov.key == "grain_worker_count") {
      EXPECT_TRUE(ov.replaceable);
      EXPECT_EQ(script.substr(ov.value_begin, ov.value_end - ov.value_begin), "-1");
    }
}

TEST(ContainerOverridesTest, TheContainersEnvFeedsTheScript) {
  const json env = json::array({{{"name", "RUN_NAME"}, {"value", "r9"}},
                                {{"name", "CKPT"}, {"value", "False"}}});
  const ContainerOverrides o = ScanScript(
      "python3 -m MaxText.train base.yml run_name=$RUN_NAME enable_checkpointing=${CKPT:-true}", env);
  EXPECT_EQ(o.Lookup("run_name").value, "r9");
  EXPECT_EQ(o.Lookup("enable_checkpointing").value, "False");
}

TEST(ContainerOverridesTest, AWordThatCannotBeExpandedMakesWhatItMayCarryUnknown) {
  ContainerOverrides o =
      ScanScript("python3 -m MaxText.train base.yml dataset_type=grain run_name=${RUN_ID}");
  EXPECT_EQ(o.Lookup("run_name").kind, KeyState::Kind::kUnknown);
  EXPECT_NE(o.Lookup("run_name").why.find("${RUN_ID}"), std::string::npos) << o.Lookup("run_name").why;
  EXPECT_EQ(o.Lookup("dataset_type").value, "grain");  // its key only
  o = ScanScript("python3 -m MaxText.train base.yml dataset_type=grain run_name=${RUN_ID} $EXTRA");
  EXPECT_NE(o.Lookup("run_name").why.find("$EXTRA"), std::string::npos) << o.Lookup("run_name").why;
  // $EXTRA may set any key, dataset_type written before it included.
  EXPECT_EQ(o.Lookup("dataset_type").kind, KeyState::Kind::kUnknown);
  EXPECT_EQ(o.Lookup("enable_checkpointing").kind, KeyState::Kind::kUnknown);
  // A word after it that sets a key wins (the later duplicate wins).
  o = ScanScript("python3 -m MaxText.train base.yml $(cat /args) dataset_type=grain");
  EXPECT_EQ(o.Lookup("dataset_type").value, "grain");
  EXPECT_EQ(o.Lookup("steps").kind, KeyState::Kind::kUnknown);
  // Words of other commands, and the program a command runs, carry no MaxText key.
  o = ScanScript("echo $(date) | tee $LOG; $PYTHON -m MaxText.train base.yml dataset_type=grain > $LOG");
  EXPECT_EQ(o.Lookup("steps").kind, KeyState::Kind::kUnset);
  EXPECT_EQ(o.Lookup("dataset_type").value, "grain");
}

TEST(ContainerOverridesTest, MEnvFromConfigMapsAndUnknownSources) {
  InMemoryConfigMaps configmaps;
  configmaps.Put("ns", "cfg", "ckpt", "false");
  const json c = json::parse(R"({"args": ["python3", "-m", "MaxText.train", "base.yml"],
    "env": [{"name": "M_ENABLE_CHECKPOINTING", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "ckpt"}}},
            {"name": "M_RUN_NAME", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}]})");
  const ContainerEnv env = ResolveContainerEnv(c, "ns", &configmaps, "");
  const ContainerOverrides o = ScanContainer(c, &env);
  EXPECT_EQ(o.Lookup("enable_checkpointing").value, "false");
  EXPECT_EQ(o.Lookup("run_name").kind, KeyState::Kind::kUnknown);
  for (const Override& ov : o.overrides) EXPECT_FALSE(ov.replaceable) << ov.key;  // not written here
}

TEST(ContainerOverridesTest, TheKubeletsVariableReferencesInArgsAreExpandedFirst) {
  json c = json::parse(R"J({"command": ["python3", "-m", "MaxText.train", "base.yml"],
    "env": [{"name": "DS", "value": "grain"}, {"name": "RUN", "value": "r-kexp"}],
    "args": ["dataset_type=$(DS)", "run_name=$(RUN)", "grain_worker_count=-1", "note=$$(RUN)"]})J");
  const ContainerOverrides o = ScanContainer(c);
  EXPECT_EQ(*o.Value("dataset_type"), "grain");
  EXPECT_EQ(*o.Value("run_name"), "r-kexp");
  EXPECT_EQ(*o.Value("note"), "$(RUN)");
  for (const Override& ov : o.overrides) {
    if (ov.key == "grain_worker_count") {
      EXPECT_TRUE(ov.replaceable);
    }
    if (ov.key == "dataset_type") {
      EXPECT_FALSE(ov.replaceable) << "its value is not written there";
    }
  }
}

TEST(ContainerOverridesTest, AReferenceToAValueGraintuneCannotSeeMakesItsKeyUnknown) {
  json c = json::parse(R"J({"command": ["python3", "-m", "MaxText.train", "base.yml"],
    "env": [{"name": "RUN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
    "args": ["run_name=$(RUN)", "grain_worker_count=-1"]})J");
  const ContainerOverrides o = ScanContainer(c);
  EXPECT_EQ(o.Lookup("run_name").kind, KeyState::Kind::kUnknown);
  EXPECT_EQ(o.Lookup("dataset_type").kind, KeyState::Kind::kUnset);
}

TEST(ContainerOverridesTest, AScriptsValueMovedByTheKubeletIsRewrittenWhereItIsWritten) {
  // The kubelet turns $$ into $ before bash runs: offsets must point into the text as written.
  json c = json::parse(R"J({"env": [{"name": "DS", "value": "grain"}],
    "command": ["bash", "-c", "X=$$HOME; python3 -m MaxText.train base.yml dataset_type=$(DS) grain_worker_count=-1"]})J");
  const ContainerOverrides o = ScanContainer(c);
  EXPECT_EQ(*o.Value("dataset_type"), "grain");
  bool found = false;
  for (const Override& ov : o.overrides) {
    if (ov.key != "grain_worker_count") continue;
    found = true;
    EXPECT_TRUE(ov.replaceable);
    EXPECT_EQ(c["command"][2].get<std::string>().substr(ov.value_begin, ov.value_end - ov.value_begin), "-1");
  }
  EXPECT_TRUE(found);
}

TEST(ContainerOverridesTest, EachMaxTextStartOfAScriptSeesItsOwnWords) {
  json c = {{"command", {"bash", "-c",
      "export M_STEPS=5\n"
      "python3 -m maxtext.trainers.pre_train.train base.yml run_name=smoke enable_checkpointing=false grain_worker_count=-1 &&\n"
      "python3 -m maxtext.trainers.pre_train.train base.yml run_name=real grain_worker_count=-1"}}};
  const ContainerOverrides o = ScanContainer(c);
  ASSERT_EQ(o.starts, 2u);
  const ContainerOverrides smoke = o.OfStart(0), real = o.OfStart(1);
  EXPECT_EQ(*smoke.Value("run_name"), "smoke");
  EXPECT_EQ(*smoke.Value("enable_checkpointing"), "false");
  EXPECT_EQ(*real.Value("run_name"), "real");
  EXPECT_FALSE(real.Value("enable_checkpointing"));
  EXPECT_EQ(*real.Value("steps"), "5");  // the script's own assignment reaches every start
}

TEST(ContainerOverridesTest, TrainCompileBeforeTheTrainerIsAStartOfItsOwn) {
  json c = {{"command", {"bash", "-c",
      "python3 -m maxtext.trainers.pre_train.train_compile base.yml grain_worker_count=-1; "
      "python3 -m maxtext.trainers.pre_train.train base.yml grain_worker_count=-1"}}};
  const ContainerOverrides o = ScanContainer(c);
  ASSERT_EQ(o.starts, 2u);
  EXPECT_TRUE(o.OfStart(0).aot_compile_only);
  EXPECT_FALSE(o.OfStart(1).aot_compile_only);
  EXPECT_FALSE(o.aot_compile_only);
}

// Every option form of a shell that ends in a command string is read (shell_invocation.h).
TEST(ContainerOverridesTest, EveryShellOptionFormBeforeTheScriptIsRead) {
  for (const std::vector<std::string>& shell :
       std::vector<std::vector<std::string>>{{"bash", "-lc"}, {"bash", "-l", "-c"}, {"bash", "-e", "-c"},
                                             {"bash", "--login", "-c"}, {"bash", "-o", "pipefail", "-c"},
                                             {"bash", "-c", "--"}, {"/bin/sh", "-ec"}}) {
    json command = shell;
    command.push_back("python3 -m MaxText.train base.yml grain_worker_count=-1");
    const ContainerOverrides o = ScanContainer(json{{"command", command}});
    const KeyState k = o.Lookup("grain_worker_count");
    EXPECT_EQ(k.kind, KeyState::Kind::kSet) << command.dump();
    EXPECT_EQ(k.value, "-1") << command.dump();
  }
}

// `bash -c SCRIPT WORD...`: the words are $0, $1, ...; MaxText sees them only through the script.
TEST(ContainerOverridesTest, TheScriptsPositionalParametersSetNoKeyGraintuneCanKnow) {
  const ContainerOverrides o = ScanContainer(json::parse(R"({
    "command": ["bash", "-c", "exec python3 -m MaxText.train base.yml \"$@\""],
    "args": ["enable_checkpointing=false", "dataset_type=grain", "grain_worker_count=-1"]})"));
  EXPECT_EQ(o.Lookup("enable_checkpointing").kind, KeyState::Kind::kUnknown);
  EXPECT_NE(o.Lookup("enable_checkpointing").why.find("$0"), std::string::npos) << o.Lookup("enable_checkpointing").why;
  EXPECT_EQ(o.Lookup("dataset_type").kind, KeyState::Kind::kUnknown);
  // A worker count there is kept where it is written (rewriting it changes nothing else).
  EXPECT_EQ(o.Lookup("grain_worker_count").value, "-1");
}

// A construct the reader does not evaluate (script_constructs.h) makes every key of the starts
// after it unknown, unless the start's own words set it afterwards; the -1 is still found.
TEST(ContainerOverridesTest, WhatTheReaderDoesNotEvaluateMakesTheLaterStartsKeysUnknown) {
  ContainerOverrides o = ScanScript(
      ". /etc/data/data.env; python3 -m MaxText.train base.yml run_name=r1 grain_worker_count=-1",
      json::parse(R"([{"name": "DS", "value": "grain"}])"));
  EXPECT_EQ(o.Lookup("dataset_type").kind, KeyState::Kind::kUnknown);
  EXPECT_NE(o.Lookup("dataset_type").why.find(". /etc/data/data.env"), std::string::npos) << o.Lookup("dataset_type").why;
  EXPECT_EQ(o.Lookup("enable_checkpointing").kind, KeyState::Kind::kUnknown);
  EXPECT_EQ(o.Lookup("run_name").value, "r1");
  EXPECT_EQ(o.Lookup("grain_worker_count").value, "-1");
  // A variable set before `source`, or on one branch of an `if`, is unknown.
  o = ScanScript("CK=false; source /env; python3 -m MaxText.train base.yml enable_checkpointing=$CK");
  EXPECT_EQ(o.Lookup("enable_checkpointing").kind, KeyState::Kind::kUnknown);
  o = ScanScript("if [ -n \"$X\" ]; then E=enable_checkpointing=false; fi; python3 -m MaxText.train base.yml $E");
  EXPECT_EQ(o.Lookup("enable_checkpointing").kind, KeyState::Kind::kUnknown);
  // A function's argument reaches MaxText only if the function passes it on.
  o = ScanScript("run() { python3 -m MaxText.train base.yml; }; run enable_checkpointing=false grain_worker_count=-1");
  EXPECT_EQ(o.Lookup("enable_checkpointing").kind, KeyState::Kind::kUnknown);
  EXPECT_EQ(o.Lookup("grain_worker_count").value, "-1");
  // Before the construct, nothing changes: a start that runs first keeps what it says.
  o = ScanScript("python3 -m MaxText.train base.yml enable_checkpointing=false; source /env");
  EXPECT_EQ(o.Lookup("enable_checkpointing").value, "false");
}

}  // namespace
}  // namespace graintune::workload
