#include "tuner/demand.h"

#include <gtest/gtest.h>

#include "tuner/machine_types.h"
#include "tuner/model_catalog.h"

namespace graintune {
namespace {

HostShape V6e() { return HostShapeOf(*FindMachineType("ct6e-standard-4t")); }

TEST(DemandTest, SeedWorkloadWithGivenStepTime) {
  WorkloadShape w;
  w.model_name = "llama3-8b";
  w.per_device_batch_size = 2;
  w.max_target_length = 8192;
  w.step_seconds = 4.3;
  Result<Demand> d = EstimateDemand(w, V6e());
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_DOUBLE_EQ(d->tokens_per_step_per_host, 2 * 8192 * 4);
  // The measured figure: 65536 tokens per 4.3 s step = 15.2k tok/s per host.
  EXPECT_NEAR(d->tokens_per_second_per_host, 15241, 1);
  EXPECT_DOUBLE_EQ(d->element_bytes, 2 * 4 * 8192 * 6 * 4);
}

TEST(DemandTest, EstimatedStepIsOnTheFastSideOfTheSeed) {
  WorkloadShape w;
  w.model_name = "llama3-8b";
  w.per_device_batch_size = 2;
  w.max_target_length = 8192;
  Result<Demand> d = EstimateDemand(w, V6e());
  ASSERT_TRUE(d.ok());
  // The measured run took 4.3 s/step (21% MFU); the estimate assumes 40%: faster, so hungrier.
  EXPECT_GT(d->compute_step_seconds, 1.5);
  EXPECT_LT(d->compute_step_seconds, 4.3);
  EXPECT_NE(d->basis.find("llama3-8b"), std::string::npos);
}

TEST(DemandTest, MissingFiguresFallBackToMaxTextDefaults) {
  WorkloadShape w;  // nothing known but the host
  Result<Demand> d = EstimateDemand(w, V6e());
  ASSERT_TRUE(d.ok());
  EXPECT_DOUBLE_EQ(d->tokens_per_step_per_host, 12 * 2048 * 4);
  EXPECT_NE(d->basis.find("MaxText default batch seq"), std::string::npos) << d->basis;
  w.model_name = "my-private-model";
  d = EstimateDemand(w, V6e());
  ASSERT_TRUE(d.ok());
  EXPECT_NE(d->basis.find("unknown model 'my-private-model'"), std::string::npos);
}

TEST(DemandTest, BiggerModelsNeedLessData) {
  WorkloadShape small, big;
  small.model_name = "gemma2-2b";
  big.model_name = "llama3-70b";
  EXPECT_GT(EstimateDemand(small, V6e())->tokens_per_second_per_host,
            5 * EstimateDemand(big, V6e())->tokens_per_second_per_host);
}

TEST(DemandTest, RejectsAbsurdInputs) {
  WorkloadShape w;
  w.per_device_batch_size = -1;
  EXPECT_FALSE(EstimateDemand(w, V6e()).ok());
  w.per_device_batch_size = 2;
  w.max_target_length = 0;
  EXPECT_FALSE(EstimateDemand(w, V6e()).ok());
  w.max_target_length = 1024;
  w.step_seconds = 0;
  EXPECT_FALSE(EstimateDemand(w, V6e()).ok());
  HostShape no_chips;
  EXPECT_NE(EstimateDemand(WorkloadShape{}, no_chips).error().find("chips per host"),
            std::string::npos);
}

TEST(DemandTest, ChipsFromLimitOverrideHost) {
  WorkloadShape w;
  w.chips_per_host = 1;
  w.per_device_batch_size = 1;
  w.max_target_length = 1000;
  EXPECT_DOUBLE_EQ(EstimateDemand(w, V6e())->tokens_per_step_per_host, 1000);
}

}  // namespace
}  // namespace graintune
