#include "tuner/slice_names.h"

#include <gtest/gtest.h>

namespace graintune {
namespace {

TEST(SliceNamesTest, MapsSlicesToTheirHosts) {
  struct Case {
    const char* name;
    const char* machine;
    int chips, hosts;
  } cases[] = {
      {"v6e-1", "ct6e-standard-1t", 1, 1},     {"v6e-4", "ct6e-standard-4t", 4, 1},
      {"v6e-8", "ct6e-standard-8t", 8, 1},     {"v6e-32", "ct6e-standard-4t", 32, 8},
      {"v6e-256", "ct6e-standard-4t", 256, 64}, {"v5litepod-16", "ct5lp-hightpu-4t", 16, 4},
      {"v5e-8", "ct5lp-hightpu-8t", 8, 1},     {"v5p-8", "ct5p-hightpu-4t", 4, 1},
      {"v5p-128", "ct5p-hightpu-4t", 64, 16},  {"v4-8", "ct4p-hightpu-4t", 4, 1},
      {"v4-32", "ct4p-hightpu-4t", 16, 4},
  };
  for (const Case& c : cases) {
    Result<SliceShape> slice = ParseSliceName(c.name);
    ASSERT_TRUE(slice.ok()) << c.name << ": " << slice.error();
    EXPECT_EQ(slice->machine.name, c.machine) << c.name;
    EXPECT_EQ(slice->chips, c.chips) << c.name;
    EXPECT_EQ(slice->hosts, c.hosts) << c.name;
    EXPECT_EQ(slice->chips, slice->hosts * slice->machine.tpu_chips) << c.name;
  }
}

TEST(SliceNamesTest, RefusesSizesNoSliceHas) {
  for (const char* bad : {"v6e-2", "v6e-12", "v6e-512", "v5p-4", "v5p-12", "v4-0", "v6e-",
                          "v6e-x", "v6e-32x", "v6e--4"}) {
    Result<SliceShape> slice = ParseSliceName(bad);
    EXPECT_FALSE(slice.ok()) << bad;
  }
  Result<SliceShape> v6e = ParseSliceName("v6e-12");
  ASSERT_FALSE(v6e.ok());
  EXPECT_NE(v6e.error().find("1, 4, 8, 16, 32, 64, 128 or 256 chips"), std::string::npos);
  Result<SliceShape> gen = ParseSliceName("v7x-8");
  ASSERT_FALSE(gen.ok());
  EXPECT_NE(gen.error().find("v6e-N, v5litepod-N, v5p-N or v4-N"), std::string::npos);
}

TEST(SliceNamesTest, TellsSlicesFromMachineTypes) {
  EXPECT_TRUE(LooksLikeSliceName("v6e-32"));
  EXPECT_TRUE(LooksLikeSliceName("v5litepod-16"));
  EXPECT_TRUE(LooksLikeSliceName("v6e-12"));  // a slice name, if not a valid size
  EXPECT_FALSE(LooksLikeSliceName("ct6e-standard-4t"));
  EXPECT_FALSE(LooksLikeSliceName("v6e"));
  EXPECT_FALSE(LooksLikeSliceName("n2-standard-8"));
}

}  // namespace
}  // namespace graintune
