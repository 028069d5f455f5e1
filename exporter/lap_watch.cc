#include "exporter/lap_watch.h"

#include <algorithm>
#include <fstream>

#include "base/log.h"
#include "telemetry/answer_fields.h"

namespace graintune::exporter {

LapWatch::LapWatch(std::string metrics_file, std::string result_file, int warmup_steps)
    : follower_(std::move(metrics_file)), result_file_(std::move(result_file)), warmup_steps_(warmup_steps) {}

void LapWatch::Accumulate(const telemetry::ProcessFigures& s) {
  telemetry::ProcessFigures& p = report_.process ? *report_.process : report_.process.emplace();
  p.workers = std::max(p.workers, s.workers);
  p.worker_memory_bytes = std::max(p.worker_memory_bytes, s.worker_memory_bytes);
  p.trainer_memory_bytes = std::max(p.trainer_memory_bytes, s.trainer_memory_bytes);
  if (s.worker_busy_fraction >= 0) {
    busy_sum_ += s.worker_busy_fraction;
    ++busy_samples_;
    p.worker_busy_fraction = busy_sum_ / busy_samples_;
  }
  if (s.trainer_cpu_cores >= 0) {
    cpu_sum_ += s.trainer_cpu_cores;
    ++cpu_samples_;
    p.trainer_cpu_cores = cpu_sum_ / cpu_samples_;
  }
}

std::optional<Result<contract::LapResult>> LapWatch::ReadResultFile() const {
  std::ifstream in(result_file_);
  if (!in) return std::nullopt;
  // The launcher writes a few hundred bytes; more is not its file.
  std::string text(kMaxResultBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxResultBytes) return Status::Error("the lap's result is too large");
  return contract::ParseLapResult(text);
}

void LapWatch::Poll(TimePoint now, const std::optional<telemetry::ProcessFigures>& sample) {
  if (report_.result) {
    // The lap is over and nothing of it changes, but for what the launcher adds to the same file
    // after it: the value it starts the trainer with, and its watcher's verdict on the trainer's
    // compile. Read again only while one of them is to come.
    const bool verdict_due = report_.result->trainer_compile_watching && !report_.result->trainer_compile;
    if (verdict_due || !report_.result->trainer_workers)
      if (std::optional<Result<contract::LapResult>> again = ReadResultFile(); again && again->ok()) {
        if (verdict_due) {
          report_.result->trainer_compile = (*again)->trainer_compile;
          report_.result->trainer_compile_watching = (*again)->trainer_compile_watching;
        }
        if (!report_.result->trainer_workers) {  // taken once: the start happens once
          report_.result->trainer_workers = (*again)->trainer_workers;
          report_.result->trainer_value_why = (*again)->trainer_value_why;
        }
      }
    return;
  }
  MetricsFileFollower::Update u = follower_.Poll();
  if (u.restarted) {
    report_ = {};
    busy_sum_ = cpu_sum_ = 0;
    busy_samples_ = cpu_samples_ = 0;
  }
  for (const telemetry::StepSample& s : u.samples)
    if (report_.steps.size() < telemetry::kMaxLapStepsReported) report_.steps.push_back(s);
  if (std::optional<Result<contract::LapResult>> result = ReadResultFile()) {
    if (result->ok()) {
      report_.result = std::move(*result).value();
      result_seen_ = now;
      return;
    }
    if (!result_refused_) LogLine(LogLevel::kWarning) << result_file_ << ": " << result->error();
    result_refused_ = true;
  }
  if (sample && static_cast<int>(report_.steps.size()) > warmup_steps_) Accumulate(*sample);
}

std::optional<telemetry::LapReport> LapWatch::Report(TimePoint now) const {
  if (report_.steps.empty() && !report_.result) return std::nullopt;
  telemetry::LapReport out = report_;
  if (result_seen_) out.result_age_seconds = std::chrono::duration<double>(now - *result_seen_).count();
  return out;
}

}  // namespace graintune::exporter
