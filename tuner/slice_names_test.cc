#include "tuner/slice_names.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

namespace graintune {
namespace {

TEST(SliceNamesTest, MapsSlicesToTheirHosts) {
  struct Case {
    const char* name;
    const char* machine;
    int chips, hosts;
  } cases[] = {
      {"v6e-1", "ct6e-standard-1t", 1, 1},     {"v6e-4", "ct6e-standard-4t", 4, 1},
      {"v6e-8", "ct6e-standard-4t", 8, 2},     {"v6e-32", "ct6e-standard-4t", 32, 8},
      {"v6e-256", "ct6e-standard-4t", 256, 64}, {"v5litepod-16", "ct5lp-hightpu-4t", 16, 4},
      {"v5e-8", "ct5lp-hightpu-4t", 8, 2},     {"v5p-8", "ct5p-hightpu-4t", 4, 1},
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

// xpk's own table (xpk 1.16.0's system characteristics, dumped by scripts/render-xpk-corpus.sh):
// every TPU device type of the generations graintune knows runs on the VMs graintune's table
// names for its labels and the chips its pods ask for, and a slice name parses to xpk's VM count.
TEST(SliceNamesTest, XpkSystemCharacteristicsMapToTheMachineTable) {
  std::ifstream in(GRAINTUNE_XPK_SYSTEMS_CSV);
  ASSERT_TRUE(in) << "cannot read " << GRAINTUNE_XPK_SYSTEMS_CSV;
  std::set<std::string> parsed;
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#' || line.rfind("device_type,", 0) == 0) continue;
    std::vector<std::string> f;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) f.push_back(cell);
    ASSERT_EQ(f.size(), 6u) << line;
    const int chips_per_vm = std::stoi(f[4]), vms = std::stoi(f[5]);
    std::optional<MachineType> type = MachineTypeForSlice(f[2], f[1], chips_per_vm);
    ASSERT_TRUE(type) << line;
    EXPECT_EQ(type->name, f[3]) << line;
    EXPECT_EQ(type->tpu_chips, chips_per_vm) << line;
    if (Result<SliceShape> slice = ParseSliceName(f[0]); slice.ok()) {
      EXPECT_EQ(slice->machine.name, f[3]) << line;
      EXPECT_EQ(slice->hosts, vms) << line;
      parsed.insert(f[0]);
    }
    ++rows;
  }
  EXPECT_GT(rows, 50);
  for (const char* name : {"v6e-1", "v6e-4", "v6e-8", "v6e-32", "v5litepod-8", "v5litepod-16", "v5p-8",
                           "v5p-128", "v4-8", "v4-32"})
    EXPECT_TRUE(parsed.count(name)) << name << " is not in xpk's table or does not parse";
}

}  // namespace
}  // namespace graintune
