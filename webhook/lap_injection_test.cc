#include "webhook/lap_injection.h"

#include <gtest/gtest.h>

#include <map>

#include "launcher/launch_plan.h"

namespace graintune::webhook {
namespace {

using json = nlohmann::json;

const LapSettings kSettings{.admission_value = 7, .steps = 40, .timeout_seconds = 900,
                            .answer_wait_seconds = 120};
const LapInjection kOptions;

Result<std::vector<std::string>> FlagsFor(const json& container) {
  return LauncherFlags(container, workload::ScanContainer(container), kSettings, kOptions);
}

// The flags as the launcher reads them: "--name=value" -> {name: value}.
std::map<std::string, std::string> ByName(const std::vector<std::string>& flags) {
  std::map<std::string, std::string> named;
  for (const std::string& flag : flags) {
    const size_t equals = flag.find('=');
    named[flag.substr(2, equals - 2)] = flag.substr(equals + 1);
  }
  return named;
}

std::vector<std::string> ArgvOf(const json& container) {
  std::vector<std::string> argv = container.value("command", std::vector<std::string>{});
  for (const std::string& a : container.value("args", std::vector<std::string>{})) argv.push_back(a);
  return argv;
}

// What the launcher makes of the webhook's flags for `container`: the lap's argv and the trainer's
// argv with 9 workers.
struct Launched {
  std::vector<std::string> lap;
  launcher::Command trainer;
};

Launched Launch(const json& container, const std::vector<std::string>& flags) {
  std::map<std::string, std::string> named = ByName(flags);
  const std::vector<std::string> argv = ArgvOf(container);
  const bool in_script = named.contains("lap-in-script");
  Result<launcher::LapInsertion> insertion =
      launcher::ParseLapInsertion(named[in_script ? "lap-in-script" : "lap-after-arg"], in_script);
  EXPECT_TRUE(insertion.ok()) << insertion.error();
  launcher::ValueSite site;
  if (named.contains("value-env")) {
    site.env_name = named["value-env"];
  } else {
    Result<launcher::ValueSite> at = launcher::ParseValueAt(named["value-at"]);
    EXPECT_TRUE(at.ok()) << at.error();
    if (at.ok()) site = at.value();
  }
  Launched launched;
  if (!insertion.ok()) return launched;
  Result<std::vector<std::string>> lap = launcher::LapArgv(argv, insertion.value(), {"steps=40", "run_name=lap"});
  EXPECT_TRUE(lap.ok()) << lap.error();
  if (lap.ok()) launched.lap = lap.value();
  const char* m_value = site.env_name.empty() ? nullptr : "7";  // admission's, in the env
  Result<launcher::Command> trainer = launcher::WithValue(
      argv, site, 7, 9, m_value ? std::optional<std::string>(m_value) : std::nullopt);
  EXPECT_TRUE(trainer.ok()) << trainer.error();
  if (trainer.ok()) launched.trainer = trainer.value();
  return launched;
}

TEST(LauncherFlagsTest, ExecFormArgsGetTheLapAfterTheLastArgAndTheValueByItsBytes) {
  const json trainer = {{"name", "maxtext"},
                        {"command", {"python3", "-m", "maxtext.trainers.pre_train.train"}},
                        {"args", {"base.yml", "steps=100", "grain_worker_count=7", "run_name=r1"}}};
  Result<std::vector<std::string>> flags = FlagsFor(trainer);
  ASSERT_TRUE(flags.ok()) << flags.error();
  std::map<std::string, std::string> named = ByName(*flags);
  EXPECT_EQ(named["value-at"], "5:19:20");
  EXPECT_EQ(named["lap-after-arg"], "6");
  EXPECT_EQ(named["admission-value"], "7");
  EXPECT_EQ(named["lap-steps"], "40");
  EXPECT_EQ(named["lap-schedule-steps"], "100");  // the trainer's schedule: its train step compiles once
  EXPECT_EQ(named["answer-file"], "/graintune-lap/value");
  EXPECT_EQ(named["lap-metrics-file"], "/graintune-metrics/lap.jsonl");
  // The compile-cache watch: the trainer's metrics file (the exporter's), MaxText's default cache.
  EXPECT_EQ(named["trainer-metrics-file"], "/graintune-metrics/metrics.jsonl");
  EXPECT_FALSE(named.contains("compile-cache-dir"));

  const Launched launched = Launch(trainer, *flags);
  EXPECT_EQ(launched.lap, (std::vector<std::string>{"python3", "-m", "maxtext.trainers.pre_train.train",
                                                    "base.yml", "steps=100", "grain_worker_count=7",
                                                    "run_name=r1", "steps=40", "run_name=lap"}));
  EXPECT_EQ(launched.trainer.argv[5], "grain_worker_count=9");
}

// The watch on the trainer's compile follows the job's own jax_cache_dir, and is left out when the
// trainer would not use the cache (dump_hlo on: MaxText turns the cache off for it).
TEST(LauncherFlagsTest, TheCompileWatchFollowsTheJobsCacheAndOnlyWhenTheTrainerUsesIt) {
  auto flags_with = [](const std::string& extra) {
    const json trainer = {{"name", "maxtext"},
                          {"command", {"bash", "-c", "python3 -m maxtext.trainers.pre_train.train base.yml " + extra +
                                                         " grain_worker_count=7"}}};
    Result<std::vector<std::string>> flags = FlagsFor(trainer);
    EXPECT_TRUE(flags.ok()) << flags.error();
    return flags.ok() ? ByName(*flags) : std::map<std::string, std::string>{};
  };
  std::map<std::string, std::string> named = flags_with("jax_cache_dir=/cache/jax");
  EXPECT_EQ(named["compile-cache-dir"], "/cache/jax");
  EXPECT_EQ(named["trainer-metrics-file"], "/graintune-metrics/metrics.jsonl");
  EXPECT_TRUE(flags_with("dump_hlo=false").contains("trainer-metrics-file"));
  for (const char* no_watch : {"dump_hlo=true", "dump_hlo=True"}) {
    named = flags_with(no_watch);
    EXPECT_FALSE(named.contains("trainer-metrics-file")) << no_watch;
    EXPECT_FALSE(named.contains("compile-cache-dir")) << no_watch;
  }
}

TEST(LauncherFlagsTest, AScriptGetsTheLapAfterTheTrainersLastWordBeforeItsRedirections) {
  const std::string script =
      "cd /app && python3 -m maxtext.trainers.pre_train.train base.yml grain_worker_count=7 "
      "\"run_name=r 1\" 2>&1 | tee /tmp/log";
  const json trainer = {{"name", "maxtext"}, {"command", {"bash", "-c", script}}};
  Result<std::vector<std::string>> flags = FlagsFor(trainer);
  ASSERT_TRUE(flags.ok()) << flags.error();
  const Launched launched = Launch(trainer, *flags);
  EXPECT_EQ(launched.lap[2],
            "cd /app && python3 -m maxtext.trainers.pre_train.train base.yml grain_worker_count=7 "
            "\"run_name=r 1\" steps=40 run_name=lap 2>&1 | tee /tmp/log");
  EXPECT_EQ(launched.trainer.argv[2],
            "cd /app && python3 -m maxtext.trainers.pre_train.train base.yml grain_worker_count=9 "
            "\"run_name=r 1\" 2>&1 | tee /tmp/log");
}

TEST(LauncherFlagsTest, AScriptThatStartsMaxTextTwiceGetsTheLapInTheStartThatHoldsTheValue) {
  const std::string script =
      "python3 -m maxtext.trainers.pre_train.train base.yml steps=2 enable_checkpointing=false && "
      "python3 -m maxtext.trainers.pre_train.train base.yml grain_worker_count=7 steps=900; echo done";
  const json trainer = {{"name", "maxtext"}, {"command", {"/bin/sh", "-c", script}}};
  Result<std::vector<std::string>> flags = FlagsFor(trainer);
  ASSERT_TRUE(flags.ok()) << flags.error();
  EXPECT_EQ(ByName(*flags)["lap-schedule-steps"], "900");
  const Launched launched = Launch(trainer, *flags);
  EXPECT_EQ(launched.lap[2],
            "python3 -m maxtext.trainers.pre_train.train base.yml steps=2 enable_checkpointing=false && "
            "python3 -m maxtext.trainers.pre_train.train base.yml grain_worker_count=7 steps=900 "
            "steps=40 run_name=lap; echo done");
}

// A script that defines a shell function before it starts MaxText (the node test's stand-in
// trainer is one): the start is still the trainer's, and the lap goes at the script's end.
// A function defined before the start may do anything with the words it is given (here it even
// shadows the interpreter): graintune does not evaluate it (workload/script_constructs.h), so it
// cannot tell what the lap's overrides would meet, and runs no lap, saying why.
TEST(LauncherFlagsTest, AScriptThatDefinesAFunctionFirstGetsNoLap) {
  const std::string script =
      "python3() { echo \"$*\" >> /dev/termination-log; }; "
      "python3 -m maxtext.trainers.pre_train.train base.yml steps=50 grain_worker_count=7";
  const json trainer = {{"name", "trainer"}, {"command", {"sh", "-c", script}}};
  Result<std::vector<std::string>> flags = FlagsFor(trainer);
  ASSERT_FALSE(flags.ok());
  EXPECT_NE(flags.error().find("a function (python3())"), std::string::npos) << flags.error();
}

TEST(LauncherFlagsTest, AnMVariableIsTheValueAndTheLapGoesAfterTheArgs) {
  const json trainer = {{"name", "maxtext"},
                        {"command", {"python3", "-m", "maxtext.trainers.pre_train.train", "base.yml"}},
                        {"env", {{{"name", "M_GRAIN_WORKER_COUNT"}, {"value", "7"}}}}};
  Result<std::vector<std::string>> flags = FlagsFor(trainer);
  ASSERT_TRUE(flags.ok()) << flags.error();
  std::map<std::string, std::string> named = ByName(*flags);
  EXPECT_EQ(named["value-env"], "M_GRAIN_WORKER_COUNT");
  EXPECT_EQ(named["lap-after-arg"], "3");
  EXPECT_FALSE(named.contains("lap-schedule-steps"));  // base.yml's steps are not read here
  const Launched launched = Launch(trainer, *flags);
  EXPECT_EQ(launched.trainer.set_env, (std::vector<std::pair<std::string, std::string>>{
                                          {"M_GRAIN_WORKER_COUNT", "9"}}));
}

TEST(LauncherFlagsTest, ContainersGraintuneCannotWrapGetNoLapAndSayWhy) {
  const std::map<std::string, std::pair<json, std::string>> cases = {
      {"the image's entrypoint",
       {{{"name", "maxtext"}, {"args", {"base.yml", "grain_worker_count=7"}}}, "no command of its own"}},
      {"an unreadable word after the value",
       {{{"name", "maxtext"},
         {"command", {"bash", "-c", "python3 -m maxtext.trainers.pre_train.train base.yml grain_worker_count=7 $(cat /args)"}}},
        "cannot read"}},
      {"the value elsewhere",
       {{{"name", "maxtext"}, {"command", {"python3", "-m", "maxtext.trainers.pre_train.train", "grain_worker_count=3"}}},
        "not in the container's"}},
  };
  for (const auto& [what, container_and_why] : cases) {
    Result<std::vector<std::string>> flags = FlagsFor(container_and_why.first);
    ASSERT_FALSE(flags.ok()) << what;
    EXPECT_NE(flags.error().find(container_and_why.second), std::string::npos) << what << ": " << flags.error();
  }
}

TEST(InjectLapTest, WrapsTheTrainerAndAddsTheInstallerFirstOnce) {
  json pod = {{"spec",
               {{"initContainers", {{{"name", "graintune-exporter"}, {"image", "e"}}}},
                {"containers",
                 {{{"name", "maxtext"},
                   {"command", {"python3", "-m", "maxtext.trainers.pre_train.train"}},
                   {"args", {"base.yml", "grain_worker_count=7"}},
                   {"volumeMounts", {{{"name", "graintune-metrics"}, {"mountPath", "/graintune-metrics"}}}}}}}}}};
  Result<std::vector<std::string>> flags = FlagsFor(pod["spec"]["containers"][0]);
  ASSERT_TRUE(flags.ok()) << flags.error();
  InjectLauncher(pod, "/spec", "/spec/containers/0", *flags, LauncherRole::kLap, kOptions);
  const json& trainer = pod["spec"]["containers"][0];
  EXPECT_FALSE(trainer.contains("args"));
  json expected_command = json::array({"/graintune-launcher/graintune-launcher"});
  for (const std::string& flag : *flags) expected_command.push_back(flag);
  for (const char* word : {"--", "python3", "-m", "maxtext.trainers.pre_train.train", "base.yml",
                           "grain_worker_count=7"})
    expected_command.push_back(word);
  EXPECT_EQ(trainer["command"], expected_command);
  EXPECT_EQ(trainer["volumeMounts"].size(), 3u);
  EXPECT_EQ(pod["spec"]["initContainers"][0]["name"], kLauncherInstallerName);
  EXPECT_EQ(pod["spec"]["initContainers"][0]["command"],
            json({"/usr/local/bin/graintune-launcher", "--install", "/graintune-launcher"}));
  EXPECT_EQ(pod["spec"]["initContainers"][1]["name"], "graintune-exporter");
  EXPECT_EQ(pod["spec"]["volumes"][1]["downwardAPI"]["items"][0]["fieldRef"]["fieldPath"],
            "metadata.annotations['graintune.dev/lap-value']");

  EXPECT_EQ(LauncherRoleOf(pod["spec"]), LauncherRole::kLap);

  const json once = pod;
  InjectLauncher(pod, "/spec", "/spec/containers/0", *flags, LauncherRole::kLap, kOptions);
  EXPECT_EQ(pod, once);
}

TEST(InjectLauncherTest, AStartCheckWrapsTheTrainerWithoutTheAnswersVolume) {
  json pod = {{"spec",
               {{"containers",
                 {{{"name", "maxtext"},
                   {"command", {"bash", "-c", "python3 -m MaxText.train base.yml grain_worker_count=7 $EXTRA"}},
                   {"volumeMounts", {{{"name", "graintune-metrics"}, {"mountPath", "/graintune-metrics"}}}}}}}}}};
  EXPECT_EQ(LauncherRoleOf(pod["spec"]), std::nullopt);
  // No lap could wrap this script (an unexpanded $EXTRA may follow graintune's word); the start
  // check reads the start where MaxText does, so it wraps it all the same.
  Result<std::vector<std::string>> flags = StartCheckFlags(pod["spec"]["containers"][0], 7, kOptions);
  ASSERT_TRUE(flags.ok()) << flags.error();
  EXPECT_EQ(*flags, (std::vector<std::string>{"--admission-value=7",
                                              "--start-check-report=/graintune-metrics/start-check.json"}));
  InjectLauncher(pod, "/spec", "/spec/containers/0", *flags, LauncherRole::kStartCheck, kOptions);
  const json& trainer = pod["spec"]["containers"][0];
  EXPECT_EQ(trainer["command"],
            json({"/graintune-launcher/graintune-launcher", "--admission-value=7",
                  "--start-check-report=/graintune-metrics/start-check.json", "--", "bash", "-c",
                  "python3 -m MaxText.train base.yml grain_worker_count=7 $EXTRA"}));
  EXPECT_EQ(trainer["volumeMounts"].size(), 2u);
  EXPECT_EQ(pod["spec"]["volumes"].size(), 1u);
  EXPECT_EQ(pod["spec"]["volumes"][0]["name"], kLauncherVolumeName);
  EXPECT_EQ(pod["spec"]["initContainers"][0]["name"], kLauncherInstallerName);
  EXPECT_EQ(LauncherRoleOf(pod["spec"]), LauncherRole::kStartCheck);
  // Pod Security "restricted": a pod that meets it still does with the installer.
  const json& installer_security = pod["spec"]["initContainers"][0]["securityContext"];
  EXPECT_EQ(installer_security["runAsNonRoot"], true);
  EXPECT_EQ(installer_security["allowPrivilegeEscalation"], false);
  EXPECT_EQ(installer_security["capabilities"]["drop"], json({"ALL"}));
  EXPECT_EQ(installer_security["seccompProfile"]["type"], "RuntimeDefault");

  json no_command = {{"name", "maxtext"}, {"args", {"grain_worker_count=7"}}};
  Result<std::vector<std::string>> none = StartCheckFlags(no_command, 7, kOptions);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("no command of its own"), std::string::npos) << none.error();
}

}  // namespace
}  // namespace graintune::webhook
