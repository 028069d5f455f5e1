// The lap's result file and the trainer-compile verdict, as the launcher writes them and the
// exporter reads them back.
#include "contract/lap_result.h"

#include <set>

#include <gtest/gtest.h>

namespace graintune::contract {
namespace {

// The launcher's result file as it writes it, and what is not one.
TEST(LapResultTest, ReadsTheLaunchersResultAndRefusesOthers) {
  Result<LapResult> r = ParseLapResult(
      R"({"completed":false,"outcome":"killed by signal 9","wall_seconds":12.5,"steps":60,"workers":64})");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->completed);
  EXPECT_EQ(r->outcome, "killed by signal 9");
  EXPECT_EQ(r->workers, 64);
  EXPECT_FALSE(r->trainer_compile.has_value());  // not judged yet
  Result<LapResult> judged = ParseLapResult(R"({"completed":true,"trainer_compile":"cache hit"})");
  ASSERT_TRUE(judged.ok()) << judged.error();
  EXPECT_EQ(judged->trainer_compile, TrainerCompileVerdict{TrainerCompile::kCacheHit});
  EXPECT_FALSE(judged->trainer_compile_watching);
  // A watcher is still to judge: no verdict yet, and so it is written back.
  Result<LapResult> watching = ParseLapResult(R"({"completed":true,"trainer_compile":"watching"})");
  ASSERT_TRUE(watching.ok()) << watching.error();
  EXPECT_TRUE(watching->trainer_compile_watching);
  EXPECT_FALSE(watching->trainer_compile.has_value());
  EXPECT_EQ(ToJson(*watching).value("trainer_compile", ""), "watching");
  EXPECT_FALSE(watching->trainer_workers.has_value());  // the trainer has not started
  // The value the trainer started with, and why, once the launcher added them; back as written.
  Result<LapResult> started = ParseLapResult(
      R"({"completed":true,"workers":64,"trainer_workers":6,"trainer_value_why":"the run's value from its practice lap"})");
  ASSERT_TRUE(started.ok()) << started.error();
  EXPECT_EQ(started->trainer_workers, 6);
  EXPECT_EQ(started->trainer_value_why, "the run's value from its practice lap");
  Result<LapResult> again = ParseLapResult(ToJson(*started).dump());
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(again->trainer_workers, 6);
  EXPECT_EQ(again->trainer_value_why, started->trainer_value_why);
  for (const char* bad : {"", "[]", R"({"outcome":"completed"})", R"({"completed":"yes"})",
                          R"({"completed":true,"workers":-1})", R"({"completed":true,"wall_seconds":1e300})",
                          R"({"completed":true,"trainer_compile":"hit"})", R"({"completed":true,"trainer_compile":1})",
                          R"({"completed":true,"trainer_compile":"unknown","trainer_compile_why":2})",
                          R"({"completed":true,"trainer_workers":0,"trainer_value_why":"x"})",
                          R"({"completed":true,"trainer_workers":6})",
                          R"({"completed":true,"trainer_workers":6.5,"trainer_value_why":"x"})",
                          R"({"completed":true,"trainer_workers":2.5e6,"trainer_value_why":"x"})"})
    EXPECT_FALSE(ParseLapResult(bad).ok()) << bad;
  EXPECT_FALSE(ParseLapResult(R"({"completed":true,"outcome":")" + std::string(300, 'x') + R"("})").ok());
}

// The verdict on the trainer's compile, from the cache's train steps before it and at its first step.
TEST(TrainerCompileTest, JudgedFromTheCachesTrainSteps) {
  const std::set<std::string> lap = {"jit_train_step-a1"};
  EXPECT_EQ(JudgeTrainerCompile(lap, lap).verdict, TrainerCompile::kCacheHit);
  EXPECT_EQ(JudgeTrainerCompile(lap, std::set<std::string>{"jit_train_step-a1", "jit_train_step-b2"}).verdict,
            TrainerCompile::kCompiled);
  EXPECT_EQ(JudgeTrainerCompile(lap, std::nullopt),
            (TrainerCompileVerdict{TrainerCompile::kUnknown, "the trainer wrote no step"}));
  // A lap that ended before its compile left nothing to hit, whatever the trainer did.
  EXPECT_EQ(JudgeTrainerCompile({}, std::set<std::string>{}).verdict, TrainerCompile::kUnknown);
  EXPECT_EQ(JudgeTrainerCompile({}, std::set<std::string>{"jit_train_step-b2"}).verdict, TrainerCompile::kUnknown);
  for (TrainerCompile v : {TrainerCompile::kCacheHit, TrainerCompile::kCompiled, TrainerCompile::kUnknown})
    EXPECT_EQ(ParseTrainerCompile(TrainerCompileName(v)), v);
  EXPECT_EQ(ParseTrainerCompile("Cache Hit"), std::nullopt);
  EXPECT_TRUE(IsTrainStepEntry("jit_train_step-9f"));
  EXPECT_FALSE(IsTrainStepEntry("jit_initialize_state-9f"));
}

}  // namespace
}  // namespace graintune::contract
