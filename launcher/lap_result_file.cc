#include "launcher/lap_result_file.h"

#include <filesystem>
#include <functional>

#include "base/atomic_file.h"
#include "base/log.h"
#include "base/small_file.h"

namespace graintune::launcher {
namespace {

// The most a result file may hold: the launcher writes a few hundred bytes.
constexpr size_t kMaxResultFileBytes = 64 * 1024;

// Changes the file with `change`; `what` names the change in a warning when it cannot be made.
void Update(const std::string& path, const std::string& what, const std::function<void(contract::LapResult&)>& change) {
  if (!std::filesystem::exists(path)) return;
  Result<contract::LapResult> result = contract::ParseLapResult(ReadSmallFile(path, kMaxResultFileBytes));
  if (!result.ok()) {
    LogLine(LogLevel::kWarning) << what << " is not recorded: " << result.error();
    return;
  }
  change(result.value());
  WriteLapResult(path, result.value());
}

}  // namespace

void WriteLapResult(const std::string& path, const contract::LapResult& result) {
  if (Status s = WriteFileAtomically(path, contract::ToJson(result).dump() + "\n"); !s.ok())
    LogLine(LogLevel::kWarning) << s.message();
}

void RecordTrainerStart(const std::string& path, int workers, const std::string& why) {
  Update(path, "the trainer's starting value", [&](contract::LapResult& r) {
    r.trainer_workers = workers;
    r.trainer_value_why = why.substr(0, contract::kMaxLapOutcomeBytes);
  });
}

void RecordTrainerCompile(const std::string& path, const contract::TrainerCompileVerdict& verdict) {
  LogTrainerCompile(verdict);
  Update(path, "the compile-cache verdict", [&](contract::LapResult& r) {
    r.trainer_compile = verdict;
    r.trainer_compile_watching = false;
  });
}

void LogTrainerCompile(const contract::TrainerCompileVerdict& verdict) {
  LogLine(LogLevel::kInfo) << "the trainer's train step: " << contract::TrainerCompileName(verdict.verdict)
                           << (verdict.why.empty() ? "" : " (" + verdict.why + ")");
}

}  // namespace graintune::launcher
