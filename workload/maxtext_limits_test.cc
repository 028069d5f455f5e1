#include "workload/maxtext_limits.h"

#include <gtest/gtest.h>

namespace graintune::workload {
namespace {

using json = nlohmann::json;
using Kind = WorkerLimit::Kind;

WorkerLimit Limit(const std::string& words, std::optional<long> files = std::nullopt,
                  std::optional<long> hosts = 1, bool eval = false) {
  const json c = {{"name", "m"},
                  {"command", {"bash", "-c", "python3 -m MaxText.train base.yml " + words}}};
  const ContainerOverrides overrides = ScanContainer(c);
  const RunResumeQuery query{overrides, nullptr, ViewOfConfig(overrides, nullptr), ""};
  return MaxTextWorkerLimit({query, eval, files, hosts});
}

TEST(MaxTextLimitsTest, HfAcceptsOneWorker) {
  const WorkerLimit hf = Limit("dataset_type=hf hf_path=x");
  EXPECT_EQ(hf.kind, Kind::kAtMost);
  EXPECT_EQ(hf.at_most, 1);
  EXPECT_NE(hf.why.find("hf"), std::string::npos);
  // MaxText checks the training count only.
  EXPECT_EQ(Limit("dataset_type=hf", std::nullopt, 1, /*eval=*/true).kind, Kind::kNone);
}

TEST(MaxTextLimitsTest, ArrayRecordAndOtherInputsHaveNoLimit) {
  EXPECT_EQ(Limit("dataset_type=grain grain_train_files=gs://b/*.arrayrecord").kind, Kind::kNone);
  EXPECT_EQ(Limit("").kind, Kind::kNone);  // synthetic by default
  EXPECT_EQ(Limit("dataset_type=tfds").kind, Kind::kNone);
}

TEST(MaxTextLimitsTest, TfrecordAndParquetAcceptTheFilesPerHost) {
  const std::string parquet = "dataset_type=grain grain_file_type=parquet grain_train_files=gs://b/*.parquet";
  // 64 files over 8 hosts: 8 per host.
  WorkerLimit l = Limit(parquet, 64, 8);
  EXPECT_EQ(l.kind, Kind::kAtMost);
  EXPECT_EQ(l.at_most, 8);
  EXPECT_NE(l.why.find("64 over 8 hosts"), std::string::npos) << l.why;
  EXPECT_EQ(Limit(parquet, 67, 8).at_most, 8);  // floor, as MaxText
  EXPECT_EQ(Limit(parquet, 3, 8).at_most, 1);   // fewer files than hosts: each host reads 1
  // One file named (no glob): 1.
  l = Limit("dataset_type=grain grain_file_type=tfrecord grain_train_files=/data/train.tfrecord");
  EXPECT_EQ(l.kind, Kind::kAtMost);
  EXPECT_EQ(l.at_most, 1);
  // The eval pipeline reads grain_eval_files; the annotation counts training files only.
  l = Limit(parquet + " grain_eval_files=/d/eval.parquet", 64, 8, /*eval=*/true);
  EXPECT_EQ(l.at_most, 1);
}

TEST(MaxTextLimitsTest, WhatCannotBeToldIsUnknownWithTheWayOut) {
  const std::string parquet = "dataset_type=grain grain_file_type=parquet grain_train_files=gs://b/*.parquet";
  WorkerLimit l = Limit(parquet);
  EXPECT_EQ(l.kind, Kind::kUnknown);
  EXPECT_NE(l.why.find("graintune.dev/data-files"), std::string::npos) << l.why;
  l = Limit(parquet, 64, std::nullopt);
  EXPECT_EQ(l.kind, Kind::kUnknown);
  EXPECT_NE(l.why.find("hosts"), std::string::npos) << l.why;
  EXPECT_EQ(Limit("$ARGS").kind, Kind::kUnknown);  // dataset_type may be hf
  EXPECT_EQ(Limit("dataset_type=grain grain_file_type=$T").kind, Kind::kUnknown);
  EXPECT_EQ(Limit(parquet, 0, 8).kind, Kind::kUnknown);
}

}  // namespace
}  // namespace graintune::workload
