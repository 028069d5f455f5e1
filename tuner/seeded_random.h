// SeededRandom: a small deterministic random source (splitmix64) for the simulator.
//
// The standard library's distributions may differ between implementations; this one gives the
// same sequence for the same seed everywhere, so simulations and benchmarks are reproducible.
// Not thread-safe: one instance per simulation.
#pragma once

#include <cmath>
#include <cstdint>

namespace graintune {

class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : state_(seed) {}

  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1).
  double Uniform() { return (static_cast<double>(Next() >> 11) + 0.5) * (1.0 / 9007199254740992.0); }
  // Standard normal (Box-Muller).
  double Normal() {
    const double kTwoPi = 6.283185307179586;
    return std::sqrt(-2.0 * std::log(Uniform())) * std::cos(kTwoPi * Uniform());
  }
  // A positive multiplier with mean 1 and coefficient of variation `cv` (log-normal).
  double Jitter(double cv) {
    if (cv <= 0) return 1.0;
    const double sigma2 = std::log(1 + cv * cv);
    return std::exp(std::sqrt(sigma2) * Normal() - sigma2 / 2);
  }

 private:
  uint64_t state_;
};

}  // namespace graintune
