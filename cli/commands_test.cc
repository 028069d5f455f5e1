#include "cli/commands.h"
#include "cli/tuning_flags.h"
#include "tuner/practice_lap.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace graintune::cli {
namespace {

struct Outcome {
  int code;
  std::string out, err;
};

Outcome Call(int (*command)(const Args&, std::ostream&, std::ostream&), const Args& args) {
  std::ostringstream out, err;
  const int code = command(args, out, err);
  return {code, out.str(), err.str()};
}

const Args kSeed = {"--machine-type", "ct6e-standard-4t", "--tpu-chips", "4",
                    "--per-device-batch-size", "2", "--max-target-length", "8192",
                    "--dataset-kind", "raw-text"};

Args With(Args base, const Args& more) {
  base.insert(base.end(), more.begin(), more.end());
  return base;
}

TEST(RecommendCommandTest, JsonContract) {
  Outcome r = Call(RunRecommend, With(kSeed, {"--model-name", "llama3-8b", "--output", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GT(j["workers"].get<int>(), 4);  // as measured: 4 starve the chips
  EXPECT_LE(j["workers"].get<int>(), j["budgets"]["ceiling"].get<int>());
  EXPECT_FALSE(j["reason"].get<std::string>().empty());
  EXPECT_EQ(j["baselines"]["maxtext_default"], 1);
}

TEST(RecommendCommandTest, AnnotatedProfileChangesThePick) {
  Outcome slow = Call(RunRecommend, With(kSeed, {"--tokens-per-second-per-worker", "1000",
                                             "--step-seconds", "4.3", "--output", "json"}));
  Outcome fast = Call(RunRecommend, With(kSeed, {"--tokens-per-second-per-worker", "4000",
                                             "--step-seconds", "4.3", "--output", "json"}));
  ASSERT_EQ(slow.code, 0);
  ASSERT_EQ(fast.code, 0);
  // 15.24k tok/s: 1k/worker x1.25 -> 20; 4k/worker -> 5.
  EXPECT_EQ(nlohmann::json::parse(slow.out)["workers"], 20);
  EXPECT_EQ(nlohmann::json::parse(fast.out)["workers"], 5);
}

TEST(RecommendCommandTest, BadInputsAreClearErrors) {
  struct Case {
    Args args;
    std::string message;
  } cases[] = {
      {{"--machine-type", "n2-standard-8"}, "unknown machine type 'n2-standard-8'"},
      {{}, "--machine-type (e.g. ct6e-standard-4t or v6e-32) or --host-cpu with --host-memory is required"},
      {{"--host-cpu", "2"}, "--host-cpu and --host-memory go together"},
      {{"--host-cpu", "0", "--host-memory", "1Gi"}, "--host-cpu must be in"},
      {{"--host-cpu", "2", "--host-memory", "8Gi"}, "--tpu-chips is required with --host-cpu"},
      {With(kSeed, {"--history", "/nonexistent.json"}), "--history cannot read /nonexistent.json"},
      {With(kSeed, {"--per-device-batch-size", "-2"}), "per_device_batch_size must be > 0"},
      {With(kSeed, {"--worker-memory", "2Gx"}), "--worker-memory"},
      {With(kSeed, {"--worker-memory", "-1Gi"}), "must not be negative"},
      {With(kSeed, {"--tpu-chips", "1000"}), "--tpu-chips must be in"},
      {With(kSeed, {"--dataset-kind", "videos"}), "unknown dataset kind"},
      {With(kSeed, {"--tokens-per-second-per-worker", "1e300"}), "must be in (0, 1e9)"},
      {With(kSeed, {"--max-target-length", "lots"}), "is not a number"},
      {With(kSeed, {"--min-workers", "9", "--max-workers", "3"}), "above maxWorkers"},
      {With(kSeed, {"--bogus", "1"}), "unknown flag --bogus"},
  };
  for (const Case& c : cases) {
    Outcome r = Call(RunRecommend, c.args);
    EXPECT_EQ(r.code, 2) << c.message;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << r.err;
  }
}

// A host the machine-type table lacks: its own cpu and memory bound the pick.
TEST(RecommendCommandTest, HostFromFlags) {
  const Args small = {"--host-cpu", "2", "--host-memory", "8Gi", "--tpu-chips", "4",
                      "--per-device-batch-size", "2", "--max-target-length", "8192",
                      "--step-seconds", "1", "--dataset-kind", "raw-text", "--reserved-cpu", "0",
                      "--reserved-memory", "0", "--output", "json"};
  Outcome r = Call(RunRecommend, small);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["host"]["cpu_cores"], 2.0);
  EXPECT_LE(j["budgets"]["cpu"].get<int>(), 2);
  EXPECT_LE(j["workers"].get<int>(), 2);
  // The same flags on a table machine type replace its figures.
  Outcome both = Call(RunRecommend, With(small, {"--machine-type", "ct6e-standard-4t"}));
  ASSERT_EQ(both.code, 0) << both.err;
  EXPECT_EQ(nlohmann::json::parse(both.out)["host"]["cpu_cores"], 2.0);
}

// --history: a data-bound first attempt makes the next pick jump to what it measured.
TEST(RecommendCommandTest, HistoryDrivesTheNextPick) {
  const std::string path = ::testing::TempDir() + "/graintune-history.json";
  const Args base = With(kSeed, {"--model-name", "llama3-8b", "--step-seconds", "4.3",
                                 "--output", "json", "--history", path});
  // The measured 4-worker run: 4.3 s while the buffer lasts, then starved at ~8.6 s.
  std::ofstream(path) << R"([{"workers": 4, "step_seconds": [30, 4.3, 4.3, 4.3, 4.3, 4.3, 8.6,
      8.4, 8.8, 8.6, 8.5, 8.7, 8.6, 8.6, 8.4, 8.8]}])";
  Outcome r = Call(RunRecommend, base);
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["workers"].get<int>(), 7) << j["reason"];  // ~2x the starved rate needed, not 5
  EXPECT_NE(j["reason"].get<std::string>().find("attempt 0"), std::string::npos) << j["reason"];

  std::ofstream(path) << R"([{"workers": 4, "step_seconds": [1, 2]}])";
  Outcome bad = Call(RunRecommend, base);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("attempt 0: "), std::string::npos) << bad.err;
}

// --history: a starved attempt, then a fed one with many workers: the next pick is the fewest
// the measured demand and per-worker rate call for, not the fed count.
TEST(RecommendCommandTest, AFedAttemptIsTrimmedToWhatItsMeasurementsNeed) {
  const std::string path = ::testing::TempDir() + "/graintune-history-fed.json";
  // Attempt 0: 4 workers, 4.3 s while the buffer lasts, then starved at ~7.4 s a step;
  // attempt 1: 17 workers, a steady 4.30 s.
  std::ofstream(path) << R"([
    {"workers": 4, "step_seconds": [30, 4.3, 4.3, 4.3, 4.3, 4.3, 7.4, 7.3, 7.5, 7.4, 7.4, 7.3,
                                    7.5, 7.4, 7.4, 7.3, 7.5, 7.4]},
    {"workers": 17, "step_seconds": [30, 4.3, 4.31, 4.29, 4.3, 4.3, 4.31, 4.29, 4.3, 4.3, 4.31,
                                     4.29, 4.3, 4.3, 4.31, 4.29]}])";
  Outcome r = Call(RunRecommend, With(kSeed, {"--model-name", "llama3-8b", "--output", "json",
                                              "--history", path}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["workers"].get<int>(), 7) << j["reason"];
  EXPECT_LE(j["workers"].get<int>(), 11) << j["reason"];
  EXPECT_NE(j["reason"].get<std::string>().find("measured demand"), std::string::npos) << j["reason"];
}

// --runs: the next run of a workload whose runs keep their value. "[]" is the first run, sized
// for the slow end of raw text; a fed run whose workers idled teaches the next run to trim.
TEST(RecommendCommandTest, RunsGiveTheNextRunsValueKeptForTheWholeRun) {
  const std::string path = ::testing::TempDir() + "/graintune-runs.json";
  const Args base = With(kSeed, {"--model-name", "llama3-8b", "--step-seconds", "4.3",
                                 "--output", "json", "--runs", path});
  std::ofstream(path) << "[]";
  Outcome first = Call(RunRecommend, base);
  ASSERT_EQ(first.code, 0) << first.err;
  const nlohmann::json run1 = nlohmann::json::parse(first.out);
  EXPECT_EQ(run1["value_for"], "next run");
  // 65,536 tokens / 4.3 s = 15.2k tok/s over 600 per worker x1.25 -> 32.
  EXPECT_EQ(run1["workers"], 32) << run1["reason"];
  EXPECT_NE(run1["reason"].get<std::string>().find("the low end of raw-text datasets"), std::string::npos);
  const Outcome attempt = Call(RunRecommend, With(kSeed, {"--model-name", "llama3-8b", "--step-seconds", "4.3",
                                                          "--output", "json"}));
  EXPECT_EQ(nlohmann::json::parse(attempt.out)["value_for"], "first attempt");
  EXPECT_LT(nlohmann::json::parse(attempt.out)["workers"].get<int>(), 32);

  // Run 1 kept the chips fed with its 32 workers busy 20% of the time: 32 x (0.20 + 0.04)
  // = 7.7 busy workers' worth, x1.4 -> 11.
  std::ofstream(path) << R"([{"workers": 32, "worker_busy_fraction": 0.2, "worker_memory_bytes": 2e9,
      "step_seconds": [30, 4.3, 4.31, 4.29, 4.3, 4.3, 4.31, 4.29, 4.3, 4.3, 4.31, 4.29, 4.3, 4.3]}])";
  Outcome second = Call(RunRecommend, base);
  ASSERT_EQ(second.code, 0) << second.err;
  const nlohmann::json run2 = nlohmann::json::parse(second.out);
  EXPECT_EQ(run2["workers"], 11) << run2["reason"];

  // One or the other; a bad busy share is named.
  EXPECT_EQ(Call(RunRecommend, With(base, {"--history", path})).code, 2);
  std::ofstream(path) << R"([{"workers": 4, "worker_busy_fraction": 1.5, "step_seconds": [1, 2]}])";
  const Outcome bad = Call(RunRecommend, base);
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--runs "), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find(": \"worker_busy_fraction\" must be a number in [0, 1]"), std::string::npos) << bad.err;
}

// --lap: the request's own job (examples/llama3-8b-v6e-32-jobset.yaml: Llama3-8B on v6e-32,
// batch 2 x 8192, raw text tokenized on the fly, no annotation). Admission gives its run 64
// workers; a lap with those 64 at 4.3 s a step, the workers busy 6% of the time, gives the run
// 5 to 11 (the request measured 4 workers starved and 8 fed).
TEST(RecommendCommandTest, TheRequestsJobFromItsPracticeLap) {
  const Args job = {"--machine-type", "v6e-32", "--model-name", "llama3-8b",
                    "--per-device-batch-size", "2", "--max-target-length", "8192", "--output", "json"};
  std::ostringstream explained, explain_err;
  std::istringstream no_input;
  ASSERT_EQ(RunExplain({std::string(GRAINTUNE_EXAMPLES_DIR) + "/llama3-8b-v6e-32-jobset.yaml",
                        "--output", "json"}, no_input, explained, explain_err), 0) << explain_err.str();
  const int admission = nlohmann::json::parse(explained.str())[0]["workers"];
  const std::string runs = ::testing::TempDir() + "/graintune-lap-runs.json";
  std::ofstream(runs) << "[]";
  const Outcome first = Call(RunRecommend, With(job, {"--runs", runs}));
  ASSERT_EQ(first.code, 0) << first.err;
  // These flags are the manifest's job: the same value for its run as explain writes.
  EXPECT_EQ(nlohmann::json::parse(first.out)["workers"], admission);
  EXPECT_EQ(admission, 64);

  const std::string lap = ::testing::TempDir() + "/graintune-lap.json";
  std::ofstream(lap) << R"({"workers": 64, "worker_busy_fraction": 0.06, "worker_memory_bytes": 1.6e9,
      "step_seconds": [55.3, 0.2, 4.3, 4.31, 4.29, 4.3, 4.3, 4.31, 4.29, 4.3, 4.3, 4.31, 4.29, 4.3,
                       4.3, 4.31, 4.29, 4.3, 4.3, 4.31, 4.29, 4.3]})";
  const Outcome r = Call(RunRecommend, With(job, {"--lap", lap}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["workers"].get<int>(), 5) << j["reason"];
  EXPECT_LE(j["workers"].get<int>(), 11) << j["reason"];
  EXPECT_EQ(j["value_for"], "run");
  EXPECT_EQ(j["lap"]["gave_value"], true);
  EXPECT_EQ(j["lap"]["admission_workers"], 64);
  EXPECT_NE(j["reason"].get<std::string>().find("practice lap (training, 1 host: 64 workers, 4.30 s/step"),
            std::string::npos) << j["reason"];
  // Text: the value and why, like the other modes.
  Args text = job;
  text.resize(text.size() - 2);  // without --output json
  const Outcome t = Call(RunRecommend, With(text, {"--lap", lap}));
  EXPECT_NE(t.out.find("grain_worker_count=" + std::to_string(j["workers"].get<int>()) +
                       "   (the run's value, from its practice lap"), std::string::npos) << t.out;
}

// A lap that gives no value leaves the run admission's value (exit 0, the reason said); a file
// that is no lap is a usage error.
TEST(RecommendCommandTest, ALapWithoutAValueKeepsAdmissionsValue) {
  const Args job = {"--machine-type", "v6e-32", "--model-name", "llama3-8b",
                    "--per-device-batch-size", "2", "--max-target-length", "8192", "--output", "json"};
  const std::string lap = ::testing::TempDir() + "/graintune-lap-hosts.json";
  std::ofstream(lap) << R"([{"workers": 64, "worker_busy_fraction": 0.06,
      "step_seconds": [55, 0.2, 4.3, 4.3, 4.3, 4.3, 4.3, 4.3, 4.3, 4.3, 4.3, 4.3]},
      {"workers": 64, "oom_killed": true}])";
  const Outcome r = Call(RunRecommend, With(job, {"--lap", lap}));
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["workers"], 64);
  EXPECT_EQ(j["lap"]["gave_value"], false);
  EXPECT_EQ(j["lap"]["hosts"], 2);
  EXPECT_NE(j["lap"]["no_value_reason"].get<std::string>().find("host 1: its lap failed"),
            std::string::npos) << j["lap"];

  std::ofstream(lap) << R"([{"workers": 64, "worker_busy_fraction": 2, "step_seconds": [1]}])";
  Outcome bad = Call(RunRecommend, With(job, {"--lap", lap}));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--lap " + lap + ": host 0: \"worker_busy_fraction\""), std::string::npos) << bad.err;
  std::ofstream(lap) << "[]";
  EXPECT_EQ(Call(RunRecommend, With(job, {"--lap", lap})).code, 2);
  {
    std::ofstream many(lap);
    many << "[{}";
    for (int i = 0; i < kMaxLapHosts; ++i) many << ",{}";
    many << "]";
  }
  const Outcome too_many = Call(RunRecommend, With(job, {"--lap", lap}));
  EXPECT_EQ(too_many.code, 2);
  EXPECT_NE(too_many.err.find("more than 4096 hosts"), std::string::npos) << too_many.err;
  EXPECT_EQ(Call(RunRecommend, With(job, {"--lap", lap, "--lap-kind", "sprint"})).code, 2);
  EXPECT_EQ(Call(RunRecommend, With(job, {"--lap", lap, "--runs", lap})).code, 2);
}

TEST(SimulateCommandTest, JsonContract) {
  Outcome r = Call(RunSimulate, With(kSeed, {"--workers", "8", "--steps", "12", "--output", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["step_seconds"].size(), 12u);
  EXPECT_FALSE(j["oom"].get<bool>());
}

TEST(SimulateCommandTest, SeedShapeThroughTheCli) {
  // 1 worker at the measured calibrated rate crawls; 8 keep the 4.3 s step.
  Args base = With(kSeed, {"--step-seconds", "4.3", "--tokens-per-second-per-worker", "2184",
                           "--steps", "40", "--output", "json"});
  auto steady = [&](const std::string& workers) {
    Outcome r = Call(RunSimulate, With(base, {"--workers", workers}));
    EXPECT_EQ(r.code, 0) << r.err;
    return nlohmann::json::parse(r.out)["steady_state"]["step_seconds_mean"].get<double>();
  };
  EXPECT_NEAR(steady("1"), 30.0, 2.0);
  EXPECT_NEAR(steady("8"), 4.3, 0.1);
}

TEST(SimulateCommandTest, OomAndBadInputs) {
  Outcome oom = Call(RunSimulate, With(kSeed, {"--workers", "170", "--worker-memory", "8Gi",
                                           "--output", "json"}));
  ASSERT_EQ(oom.code, 0) << oom.err;
  EXPECT_TRUE(nlohmann::json::parse(oom.out)["oom"].get<bool>());
  EXPECT_EQ(Call(RunSimulate, kSeed).code, 2);  // no --workers
  EXPECT_EQ(Call(RunSimulate, With(kSeed, {"--workers", "-3"})).code, 2);
  EXPECT_EQ(Call(RunSimulate, With(kSeed, {"--workers", "4", "--steps", "0"})).code, 2);
}

TEST(CalibrateCommandTest, FitsTheSeedCsv) {
  Outcome r = Call(RunCalibrate, {"--csv", GRAINTUNE_MEASURED_STEPS_CSV, "--output", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NEAR(j["batch_seconds_per_worker"].get<double>(), 30.0, 1.0);
  EXPECT_EQ(Call(RunCalibrate, {"--csv", "/nonexistent.csv"}).code, 2);
}

}  // namespace
}  // namespace graintune::cli

namespace graintune::cli {
namespace {

Outcome Tool(const Args& args) {
  std::ostringstream out, err;
  std::istringstream in;
  const int code = RunGraintune(args, in, out, err);
  return {code, out.str(), err.str()};
}

TEST(GraintuneToolTest, VersionAndHelpOnKubectlConventions) {
  Outcome version = Tool({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out, VersionLine() + "\n");
  EXPECT_EQ(VersionLine().rfind("graintune 0.", 0), 0u) << VersionLine();
  EXPECT_EQ(Tool({"version"}).out, version.out);

  Outcome top = Tool({"help"});
  EXPECT_EQ(top.code, 0);
  for (const char* command : {"recommend", "explain", "simulate", "calibrate"})
    EXPECT_NE(top.out.find(command), std::string::npos) << command;
  for (const char* command : {"recommend", "explain", "simulate", "calibrate"}) {
    Outcome a = Tool({"help", command});
    Outcome b = Tool({command, "--help"});
    Outcome c = Tool({command, "-h"});
    EXPECT_EQ(a.code, 0) << command;
    EXPECT_EQ(b.code, 0) << command << b.err;
    EXPECT_EQ(a.out, b.out) << command;
    EXPECT_EQ(b.out, c.out) << command;
    EXPECT_NE(a.out.find(std::string("usage: graintune ") + command), std::string::npos);
    EXPECT_NE(a.out.find("-o, --output FORMAT"), std::string::npos) << command;
  }
  // Every tuning flag is in recommend's help, with the defaults that apply.
  const std::string help = Tool({"recommend", "--help"}).out;
  for (const FlagSpec& f : TuningFlagSpecs()) EXPECT_NE(help.find("--" + f.name), std::string::npos) << f.name;
  EXPECT_NE(help.find("(default: 64 (the chart's default policy))"), std::string::npos) << help;

  Outcome unknown = Tool({"frobnicate"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_EQ(Tool({"help", "frobnicate"}).code, 2);
  EXPECT_EQ(Tool({}).code, 2);
}

TEST(GraintuneToolTest, OutputIsValidatedEverywhereAndStrayArgumentsAreRefused) {
  for (const char* command : {"recommend", "simulate", "calibrate", "explain"}) {
    Outcome bad = Tool({command, "-o", "xml"});
    EXPECT_EQ(bad.code, 2) << command;
    EXPECT_NE(bad.err.find("--output must be one of text|json|yaml, got 'xml'"), std::string::npos)
        << command << ": " << bad.err;
    EXPECT_NE(bad.err.find(std::string("See 'graintune ") + command + " --help'"), std::string::npos);
  }
  Outcome stray = Tool(With({"recommend"}, With(kSeed, {"llama3-8b"})));
  EXPECT_EQ(stray.code, 2);
  EXPECT_NE(stray.err.find("unexpected argument 'llama3-8b'"), std::string::npos) << stray.err;
  Outcome yaml = Tool(With({"recommend"}, With(kSeed, {"-o", "yaml"})));
  ASSERT_EQ(yaml.code, 0) << yaml.err;
  Outcome json = Tool(With({"recommend"}, With(kSeed, {"-ojson"})));
  ASSERT_EQ(json.code, 0) << json.err;
  const int workers = nlohmann::json::parse(json.out)["workers"];
  EXPECT_NE(yaml.out.find("\nworkers: " + std::to_string(workers) + "\n"), std::string::npos) << yaml.out;
}

TEST(GraintuneToolTest, SliceNamesAndDoubtfulInputsWarn) {
  Outcome slice = Tool({"recommend", "--machine-type", "v6e-32", "--model-name", "llama3-8b",
                        "--per-device-batch-size", "2", "--max-target-length", "8192", "-o", "json"});
  ASSERT_EQ(slice.code, 0) << slice.err;
  const nlohmann::json s = nlohmann::json::parse(slice.out);
  EXPECT_EQ(s["slice"]["hosts"], 8);
  EXPECT_EQ(s["slice"]["machine_type"], "ct6e-standard-4t");
  EXPECT_EQ(s["host"]["tpu_chips"], 4);
  EXPECT_TRUE(s["warnings"].empty());
  EXPECT_TRUE(slice.err.empty()) << slice.err;
  // The same answer as the machine type itself.
  Outcome by_type = Tool(With({"recommend"}, With(kSeed, {"--model-name", "llama3-8b", "-o", "json"})));
  EXPECT_EQ(nlohmann::json::parse(by_type.out)["workers"], s["workers"]);

  Outcome bad_slice = Tool({"recommend", "--machine-type", "v6e-12"});
  EXPECT_EQ(bad_slice.code, 2);
  EXPECT_NE(bad_slice.err.find("not a v6e slice size"), std::string::npos) << bad_slice.err;

  Outcome doubtful = Tool({"recommend", "--machine-type", "ct6e-standard-4t", "--tpu-chips", "8",
                           "--model-name", "foo-bar", "-o", "json"});
  ASSERT_EQ(doubtful.code, 0) << doubtful.err;
  const nlohmann::json d = nlohmann::json::parse(doubtful.out);
  ASSERT_EQ(d["warnings"].size(), 2u) << d["warnings"];
  EXPECT_NE(d["warnings"][0].get<std::string>().find("--tpu-chips 8 but ct6e-standard-4t hosts have 4 chips"),
            std::string::npos);
  EXPECT_NE(d["warnings"][1].get<std::string>().find("unknown model 'foo-bar'"), std::string::npos);
  EXPECT_NE(doubtful.err.find("graintune recommend: warning: unknown model 'foo-bar'"), std::string::npos);
}

TEST(GraintuneToolTest, SimulateSaysWhatIsMissing) {
  Outcome r = Tool({"simulate", "--machine-type", "v6e-32"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--workers N is required"), std::string::npos) << r.err;
}

TEST(GraintuneToolTest, TheCliAnswersWithTheChartsDefaultPolicy) {
  // Demand far above what 64 workers serve: the chart's default policy caps at 64.
  Outcome r = Tool(With({"recommend"}, With(kSeed, {"--tokens-per-second-per-worker", "10",
                                                     "--worker-memory", "100Mi", "-o", "json"})));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["workers"], 64);
}

}  // namespace
}  // namespace graintune::cli
