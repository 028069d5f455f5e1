#include "tuner/host_shape.h"

#include <algorithm>
#include <cctype>

namespace graintune {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMiB = 1024.0 * 1024;

// GKE reserves cpu: 6% of the first core, 1% of the next, 0.5% of the next 2, 0.25% above 4.
double GkeReservedCpu(double cores) {
  struct Tier {
    double upto;
    double fraction;
  };
  constexpr Tier kTiers[] = {{1, 0.06}, {2, 0.01}, {4, 0.005}, {1e9, 0.0025}};
  double reserved = 0, below = 0;
  for (const Tier& tier : kTiers) {
    if (cores <= below) break;
    reserved += (std::min(cores, tier.upto) - below) * tier.fraction;
    below = tier.upto;
  }
  return reserved;
}

// GKE reserves memory: 25% of the first 4 GiB, 20% of the next 4, 10% of the next 8, 6% of the
// next 112, 2% above 128 GiB.
double GkeReservedMemory(double bytes) {
  struct Tier {
    double upto;
    double fraction;
  };
  const Tier kTiers[] = {{4 * kGiB, 0.25},
                         {8 * kGiB, 0.20},
                         {16 * kGiB, 0.10},
                         {128 * kGiB, 0.06},
                         {1e30, 0.02}};
  double reserved = 0, below = 0;
  for (const Tier& tier : kTiers) {
    if (bytes <= below) break;
    reserved += (std::min(bytes, tier.upto) - below) * tier.fraction;
    below = tier.upto;
  }
  return reserved;
}

}  // namespace

std::string ToString(ChipGeneration generation) {
  switch (generation) {
    case ChipGeneration::kV4: return "v4";
    case ChipGeneration::kV5e: return "v5e";
    case ChipGeneration::kV5p: return "v5p";
    case ChipGeneration::kV6e: return "v6e";
    case ChipGeneration::kUnknown: break;
  }
  return "unknown";
}

ChipGeneration ParseChipGeneration(const std::string& text) {
  std::string t;
  for (char c : text) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t == "v4" || t == "tpu-v4" || t == "tpu-v4-podslice") return ChipGeneration::kV4;
  if (t == "v5e" || t == "v5lite" || t == "v5litepod" || t == "tpu-v5-lite-podslice" ||
      t == "tpu-v5-lite-device")
    return ChipGeneration::kV5e;
  if (t == "v5p" || t == "tpu-v5p-slice") return ChipGeneration::kV5p;
  if (t == "v6e" || t == "tpu-v6e-slice" || t == "trillium") return ChipGeneration::kV6e;
  return ChipGeneration::kUnknown;
}

HostShape GkeAllocatable(const HostShape& capacity) {
  HostShape out = capacity;
  out.cpu_cores = std::max(0.0, capacity.cpu_cores - GkeReservedCpu(capacity.cpu_cores));
  out.memory_bytes = std::max(
      0.0, capacity.memory_bytes - GkeReservedMemory(capacity.memory_bytes) - 100 * kMiB);
  return out;
}

HostShape BoundByLimits(const HostShape& host, std::optional<double> cpu_limit,
                        std::optional<double> memory_limit) {
  HostShape out = host;
  if (cpu_limit && *cpu_limit > 0) out.cpu_cores = std::min(out.cpu_cores, *cpu_limit);
  if (memory_limit && *memory_limit > 0)
    out.memory_bytes = std::min(out.memory_bytes, *memory_limit);
  return out;
}

}  // namespace graintune
