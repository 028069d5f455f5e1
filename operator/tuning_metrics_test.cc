#include "operator/tuning_metrics.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

namespace graintune::op {
namespace {

using nlohmann::json;

std::string Exposition(const std::vector<json>& objects) {
  return prometheus::TextSerializer().Serialize(TuningMetricFamilies(objects));
}

json GrainTuning() {
  return {{"metadata", {{"namespace", "team-a"}, {"name", "llama"}}},
          {"status",
           {{"trials",
             {{{"attempt", 0}, {"workers", 4}, {"samples", 12}, {"stepTimeMeanSeconds", 6.885},
               {"tflopsPerDevice", 144.1}, {"dataBound", true}, {"oomKilled", false}},
              {{"attempt", 1}, {"workers", 40}, {"samples", 0}, {"oomKilled", true}}}},
            {"recommendation", {{"workers", 15}, {"attempt", 2}}}}}};
}

TEST(TuningMetrics, OneSeriesPerTrialLabelledByGrainTuningAndAttempt) {
  const std::string text = Exposition({GrainTuning()});
  const std::string l0 = R"({attempt="0",graintuning="llama",graintuning_namespace="team-a"})";
  const std::string l1 = R"({attempt="1",graintuning="llama",graintuning_namespace="team-a"})";
  for (const std::string& line :
       {"graintune_trial_workers" + l0 + " 4", "graintune_trial_step_seconds" + l0 + " 6.885",
        "graintune_trial_tflops_per_device" + l0 + " 144.1", "graintune_trial_data_bound" + l0 + " 1",
        "graintune_trial_oom_killed" + l0 + " 0", "graintune_trial_workers" + l1 + " 40",
        "graintune_trial_oom_killed" + l1 + " 1",
        std::string(R"(graintune_recommended_workers{attempt="2",graintuning="llama",graintuning_namespace="team-a"} 15)")})
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << " not in\n" << text;
  // An OOM-killed attempt measured nothing: no step time, TFLOP/s or data-bound series.
  for (const char* name : {"graintune_trial_step_seconds", "graintune_trial_tflops_per_device",
                           "graintune_trial_data_bound"})
    EXPECT_EQ(text.find(name + l1), std::string::npos) << name;
}

TEST(TuningMetrics, APracticeLapIsTold) {
  json gt = GrainTuning();
  gt["status"]["lap"] = {{"attempt", 0}, {"answer", "7"}, {"workers", 7}, {"admissionWorkers", 64},
                         {"hosts", 2}, {"wallSeconds", 140.5}};
  const std::string l0 = R"({attempt="0",graintuning="llama",graintuning_namespace="team-a"})";
  std::string text = Exposition({gt});
  for (const std::string& line : {"graintune_lap_gave_value" + l0 + " 1", "graintune_lap_workers" + l0 + " 7",
                                  "graintune_lap_admission_workers" + l0 + " 64", "graintune_lap_seconds" + l0 + " 140.5"})
    EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << " not in\n" << text;
  EXPECT_EQ(text.find("graintune_lap_trainer_compile_cache_hit{"), std::string::npos) << text;  // not known yet
  gt["status"]["lap"]["trainerCompile"] = "CacheHit";
  EXPECT_NE(Exposition({gt}).find("graintune_lap_trainer_compile_cache_hit" + l0 + " 1\n"), std::string::npos);
  gt["status"]["lap"]["trainerCompile"] = "Compiled";
  EXPECT_NE(Exposition({gt}).find("graintune_lap_trainer_compile_cache_hit" + l0 + " 0\n"), std::string::npos);
  gt["status"]["lap"] = {{"attempt", 0}, {"answer", "none: the lap of p exited 1"}, {"admissionWorkers", 64}, {"hosts", 0}};
  text = Exposition({gt});
  EXPECT_NE(text.find("graintune_lap_gave_value" + l0 + " 0\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("graintune_lap_workers{"), std::string::npos) << text;
}

TEST(TuningMetrics, NoSeriesWhenNothingIsMeasured) {
  json fresh = {{"metadata", {{"namespace", "a"}, {"name", "b"}}}, {"status", json::object()}};
  json nameless = GrainTuning();
  nameless["metadata"].erase("name");
  const std::string text = Exposition({fresh, nameless});
  // prometheus-cpp 1.0 leaves a family without series out of the exposition altogether.
  EXPECT_EQ(text.find("graintune_trial_workers"), std::string::npos) << text;
  EXPECT_EQ(text.find("graintune_recommended_workers{"), std::string::npos) << text;
}

}  // namespace
}  // namespace graintune::op
