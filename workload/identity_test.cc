#include "workload/identity.h"

#include <gtest/gtest.h>

#include "workload/workload_annotations.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

TEST(IdentityTest, AttemptIsTheLargerOfJobSetsLabelAndGraintunesAnnotation) {
  EXPECT_EQ(AttemptOf(json::object()), 0);
  EXPECT_EQ(AttemptOf({{"labels", {{kRestartAttemptLabel, "3"}}}}), 3);
  EXPECT_EQ(AttemptOf({{"annotations", {{kAttemptAnnotation, "2"}}}}), 2);
  EXPECT_EQ(AttemptOf({{"labels", {{kRestartAttemptLabel, "0"}}}, {"annotations", {{kAttemptAnnotation, "2"}}}}), 2);
  EXPECT_EQ(AttemptOf({{"labels", {{kRestartAttemptLabel, "3"}}}, {"annotations", {{kAttemptAnnotation, "1"}}}}), 3);
  EXPECT_EQ(AttemptOf({{"labels", {{kRestartAttemptLabel, "1"}}}, {"annotations", {{kAttemptAnnotation, "x"}}}}), 1);
  EXPECT_EQ(AttemptOf({{"annotations", {{kAttemptAnnotation, "-4"}}}}), 0);
}

TEST(IdentityTest, TuningKeyIsTheAnnotationElseTheOwnerElseTheName) {
  const json pod = {{"metadata",
                     {{"name", "p-0"},
                      {"labels", {{"batch.kubernetes.io/job-name", "j"},
                                  {"jobset.sigs.k8s.io/jobset-name", "js"}}}}}};
  EXPECT_EQ(TuningKeyOf(pod, WorkloadKind::kPod), "js");
  json job_pod = pod;
  job_pod["metadata"]["labels"].erase("jobset.sigs.k8s.io/jobset-name");
  EXPECT_EQ(TuningKeyOf(job_pod, WorkloadKind::kPod), "j");
  json keyed = pod;
  keyed["metadata"]["annotations"][kTuningKeyAnnotation] = "llama-runs";
  EXPECT_EQ(TuningKeyOf(keyed, WorkloadKind::kPod), "llama-runs");
  // A Job learns under its JobSet but not under a Job label; a JobSet is its own key.
  EXPECT_EQ(TuningKeyOf(job_pod, WorkloadKind::kJob), "p-0");
  EXPECT_EQ(TuningKeyOf({{"metadata", {{"generateName", "run-"}}}}, WorkloadKind::kJobSet), "run-");
}

TEST(IdentityTest, MalformedMetadataReadsAsEmpty) {
  for (const json& object : {json(), json::array(), json{{"metadata", "x"}},
                             json{{"metadata", {{"name", 3}, {"labels", "x"}}}}}) {
    EXPECT_EQ(TuningKeyOf(object, WorkloadKind::kPod), "") << object.dump();
    EXPECT_EQ(AttemptOf(MetadataOf(object)), 0) << object.dump();
    EXPECT_EQ(MetadataString(object, "name"), "") << object.dump();
  }
}

}  // namespace
}  // namespace graintune::workload
