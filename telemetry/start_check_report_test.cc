#include "telemetry/start_check_report.h"

#include <gtest/gtest.h>

namespace graintune::telemetry {
namespace {

// As launcher/python/graintune_start_check.py wrote it in front of MaxText's trainer resuming a
// 2-worker checkpoint with grain_worker_count=1 (argv and most keys cut here).
constexpr char kWritten[] = R"json({"admission_value": 1, "pid": 20000, "argv": ["steps=8", "grain_worker_count=1"],
  "cwd": "/tmp/ckpt", "keys": {"dataset_type": "grain", "grain_worker_count": 1, "grain_worker_count_eval": 1,
  "enable_checkpointing": true, "checkpoint_dir": "/tmp/ckpt/out/r2/checkpoints/", "grain_use_elastic_iterator": false,
  "colocated_python_data_input": false, "grain_file_type": "arrayrecord", "run_name": "r2"},
  "checkpoint": {"layout": "per-worker", "step": 5, "saved_workers": 2,
  "why": "step 5 saved Grain's iterator with 2 workers (1 host file(s))"}, "files_per_host": null, "checked": true,
  "written_value": 1, "started_value": 2,
  "why": "it resumes step 5, whose Grain iterator was saved with 2 workers (the start said 1)", "changed": true,
  "seconds": 28.579})json";

TEST(StartCheckReport, ReadsWhatTheCheckWrites) {
  Result<StartCheckReport> r = ParseStartCheckReport(kWritten);
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->checked);
  EXPECT_TRUE(r->changed);
  EXPECT_EQ(r->admission_value, 1);
  EXPECT_EQ(r->written_value, 1);
  EXPECT_EQ(r->started_value, 2);
  EXPECT_EQ(r->dataset_type, "grain");
  EXPECT_EQ(r->checkpoint_dir, "/tmp/ckpt/out/r2/checkpoints/");
  EXPECT_EQ(r->enable_checkpointing, true);
  EXPECT_EQ(r->elastic_iterator, false);
  ASSERT_TRUE(r->checkpoint);
  EXPECT_EQ(r->checkpoint->layout, "per-worker");
  EXPECT_EQ(r->checkpoint->step, 5);
  EXPECT_EQ(r->checkpoint->saved_workers, 2);
  EXPECT_DOUBLE_EQ(r->seconds, 28.579);
  // Served as the exporter's "start_check" and read back by the operator: the same report.
  Result<StartCheckReport> again = StartCheckReportFromJson(ToJson(*r));
  ASSERT_TRUE(again.ok()) << again.error();
  EXPECT_EQ(ToJson(*again), ToJson(*r));
}

TEST(StartCheckReport, AFailedOpenCheckHasNoValues) {
  Result<StartCheckReport> r = ParseStartCheckReport(
      R"({"checked": false, "why": "the check's loader failed: ModuleNotFoundError: No module named 'maxtext'",
          "admission_value": 7, "keys": null, "checkpoint": null, "written_value": null, "started_value": null})");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_FALSE(r->checked);
  EXPECT_FALSE(r->written_value);
  EXPECT_FALSE(r->checkpoint);
  EXPECT_NE(r->why.find("No module named"), std::string::npos);
}

TEST(StartCheckReport, EveryMalformedReportIsAnErrorNeverACrash) {
  for (const std::string text :
       {"", "not json", "[1, 2]", R"({"started_value": "2"})", R"({"started_value": 1e12})",
        R"({"written_value": -5})", R"({"checkpoint": {"step": -1}})", R"({"checkpoint": {"saved_workers": 2.5}})"}) {
    EXPECT_FALSE(ParseStartCheckReport(text).ok()) << text;
  }
  EXPECT_FALSE(ParseStartCheckReport(std::string(kMaxStartCheckReportBytes + 1, ' ')).ok());
  Result<StartCheckReport> long_why = ParseStartCheckReport(R"({"why": ")" + std::string(100000 - 20, 'x') + R"("})");
  ASSERT_FALSE(long_why.ok());  // over the size cap
  Result<StartCheckReport> cut = ParseStartCheckReport(R"({"why": ")" + std::string(10000, 'x') + R"("})");
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->why.size(), 2000u);
}

}  // namespace
}  // namespace graintune::telemetry
