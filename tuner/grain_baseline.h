// What MaxText does today, as baselines for the benchmark and for `graintune explain`.
//
// MaxText's grain_worker_count=-1 calls Grain's pick_performance_config, whose worker count is
// min(ram_budget_mb / element_MB, cpu_count): RAM-only, no throughput measured, no process
// memory counted. MaxText passes ram_budget_mb = 1024. Pure functions.
#pragma once

namespace graintune {

inline constexpr double kMaxTextRamBudgetMb = 1024;
inline constexpr int kMaxTextDefaultWorkers = 1;

// Grain's pick: min(ram_budget_mb / element_mb, cpu_count), at least 1.
int GrainPickPerformanceWorkers(double element_bytes, double cpu_count,
                                double ram_budget_mb = kMaxTextRamBudgetMb);

}  // namespace graintune
