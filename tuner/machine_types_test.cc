#include "tuner/machine_types.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

TEST(MachineTypesTest, KnowsPublicFigures) {
  auto t = FindMachineType("ct6e-standard-4t");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->vcpus, 180);
  EXPECT_EQ(t->memory_gib, 720);
  EXPECT_EQ(t->tpu_chips, 4);
  EXPECT_EQ(FindMachineType("ct5lp-hightpu-4t")->vcpus, 112);
  EXPECT_EQ(FindMachineType("ct5p-hightpu-4t")->memory_gib, 448);
  EXPECT_FALSE(FindMachineType("n2-standard-8"));
}

TEST(MachineTypesTest, AllocatableSubtractsGkeReservations) {
  HostShape host = HostShapeOf(*FindMachineType("ct6e-standard-4t"));
  // cpu: 0.06 + 0.01 + 2*0.005 + 176*0.0025 = 0.52 reserved.
  EXPECT_NEAR(host.cpu_cores, 180 - 0.52, 1e-9);
  // memory: 1 + 0.8 + 0.8 + 6.72 + 0.02*(720-128) GiB reserved, plus 100 MiB eviction.
  const double reserved = (1 + 0.8 + 0.8 + 6.72 + 0.02 * 592) * kGiB + 100.0 * 1024 * 1024;
  EXPECT_NEAR(host.memory_bytes, 720 * kGiB - reserved, 1.0);
  EXPECT_EQ(host.tpu_chips, 4);
  EXPECT_EQ(host.generation, ChipGeneration::kV6e);
}

TEST(MachineTypesTest, SliceLabelsPickTheHostType) {
  EXPECT_EQ(MachineTypeForSlice("tpu-v6e-slice", "4x8")->name, "ct6e-standard-4t");
  // 2x4 is two 4-chip VMs (xpk's v6e-8), unless the pod asks for all 8 chips of one -8t host.
  EXPECT_EQ(MachineTypeForSlice("tpu-v6e-slice", "2x4")->name, "ct6e-standard-4t");
  EXPECT_EQ(MachineTypeForSlice("tpu-v6e-slice", "2x4", 4)->name, "ct6e-standard-4t");
  EXPECT_EQ(MachineTypeForSlice("tpu-v6e-slice", "2x4", 8)->name, "ct6e-standard-8t");
  EXPECT_EQ(MachineTypeForSlice("tpu-v5-lite-podslice", "2x4")->name, "ct5lp-hightpu-4t");
  EXPECT_EQ(MachineTypeForSlice("tpu-v5-lite-podslice", "2x4", 8)->name, "ct5lp-hightpu-8t");
  EXPECT_EQ(MachineTypeForSlice("tpu-v6e-slice", "4x8", 8)->name, "ct6e-standard-4t");  // no 32-chip host
  EXPECT_EQ(MachineTypeForSlice("tpu-v6e-slice", "1x1")->name, "ct6e-standard-1t");
  EXPECT_EQ(MachineTypeForSlice("tpu-v5-lite-podslice", "2x2")->name, "ct5lp-hightpu-4t");
  EXPECT_EQ(MachineTypeForSlice("tpu-v5p-slice", "2x2x4")->name, "ct5p-hightpu-4t");
  EXPECT_EQ(MachineTypeForSlice("tpu-v4-podslice", "2x2x2")->name, "ct4p-hightpu-4t");
  EXPECT_FALSE(MachineTypeForSlice("nvidia-h100", "4x8"));
}

TEST(MachineTypesTest, TopologyParsing) {
  EXPECT_EQ(*ChipsInTopology("4x8"), 32);
  EXPECT_EQ(*ChipsInTopology("2x2x4"), 16);
  EXPECT_FALSE(ChipsInTopology(""));
  EXPECT_FALSE(ChipsInTopology("4x"));
  EXPECT_FALSE(ChipsInTopology("ax8"));
  EXPECT_FALSE(ChipsInTopology("0x8"));
  EXPECT_FALSE(ChipsInTopology("4096x4096x4096"));
}

TEST(MachineTypesTest, ContainerLimitsBound) {
  HostShape host = HostShapeOf(*FindMachineType("ct5lp-hightpu-4t"));
  HostShape bounded = BoundByLimits(host, 24.0, 64 * kGiB);
  EXPECT_EQ(bounded.cpu_cores, 24);
  EXPECT_EQ(bounded.memory_bytes, 64 * kGiB);
  HostShape unbounded = BoundByLimits(host, std::nullopt, std::nullopt);
  EXPECT_EQ(unbounded.cpu_cores, host.cpu_cores);
}

}  // namespace
}  // namespace graintune
