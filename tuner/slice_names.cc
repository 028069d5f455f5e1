#include "tuner/slice_names.h"

#include <charconv>

namespace graintune {

namespace {

struct Generation {
  std::string_view prefix;        // before the dash
  std::string_view machine_stem;  // machine type without its chip-count suffix
  int cores_per_chip;             // what the number after the dash counts per chip
  bool single_host_types;         // -1t and -8t hosts exist
};

constexpr Generation kGenerations[] = {
    {"v6e", "ct6e-standard-", 1, true},
    {"v5litepod", "ct5lp-hightpu-", 1, true},
    {"v5e", "ct5lp-hightpu-", 1, true},
    {"v5p", "ct5p-hightpu-", 2, false},
    {"v4", "ct4p-hightpu-", 2, false},
};

const Generation* FindGeneration(std::string_view prefix) {
  for (const Generation& g : kGenerations)
    if (g.prefix == prefix) return &g;
  return nullptr;
}

bool IsPowerOfTwo(int n) { return n > 0 && (n & (n - 1)) == 0; }

}  // namespace

bool LooksLikeSliceName(std::string_view text) {
  const size_t dash = text.rfind('-');
  if (dash == std::string_view::npos || dash + 1 >= text.size()) return false;
  for (char c : text.substr(dash + 1))
    if (c < '0' || c > '9') return false;
  return FindGeneration(text.substr(0, dash)) != nullptr;
}

Result<SliceShape> ParseSliceName(std::string_view text) {
  const size_t dash = text.rfind('-');
  const Generation* generation =
      dash == std::string_view::npos ? nullptr : FindGeneration(text.substr(0, dash));
  if (!generation) {
    return Status::Error("unknown TPU slice '" + std::string(text) +
                         "'; slices are named v6e-N, v5litepod-N, v5p-N or v4-N");
  }
  int count = 0;
  const std::string_view digits = text.substr(dash + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
  const std::string sizes = generation->cores_per_chip == 1
                                ? "1, 4, 8, 16, 32, 64, 128 or 256 chips"
                                : "multiples of 8 (" + std::to_string(generation->cores_per_chip) +
                                      " TensorCores per chip) up to 12288";
  const auto refuse = [&] {
    return Status::Error("'" + std::string(text) + "' is not a " +
                         std::string(generation->prefix) + " slice size; sizes are " + sizes);
  };
  if (ec != std::errc() || end != digits.data() + digits.size() || count < 1) return refuse();

  SliceShape slice;
  slice.name = std::string(text);
  std::string machine;
  if (generation->cores_per_chip == 1) {
    // v5e / v6e: 1 and 4 chips on one host; larger slices (8 chips too: v6e-8 is 2 x 4 chips,
    // as xpk lays it out) of 4-chip hosts, power-of-two sizes up to 256 chips.
    if (count > 256 || !IsPowerOfTwo(count) || count == 2) return refuse();
    slice.chips = count;
    const int per_host = count == 1 ? 1 : 4;
    slice.hosts = count == 1 ? 1 : count / 4;
    machine = std::string(generation->machine_stem) + std::to_string(per_host) + "t";
  } else {
    if (count % 8 != 0 || count > 12288) return refuse();
    slice.chips = count / generation->cores_per_chip;
    slice.hosts = slice.chips / 4;
    machine = std::string(generation->machine_stem) + "4t";
  }
  std::optional<MachineType> type = FindMachineType(machine);
  if (!type) return Status::Error("no machine type " + machine + " for slice " + slice.name);
  slice.machine = *type;
  return slice;
}

}  // namespace graintune
