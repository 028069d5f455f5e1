#include "tests/node/node_lap.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/controlplane/maxtext_workload.h"
#include "tests/node/node_workloads.h"

namespace graintune::testing {

std::string LapPolicy(const std::string& ns, int max_workers) {
  // The tiny run is a few dozen steps, so its lap is much of it: the policy allows that here
  // (lap.maxRunShare: 1), where a real run's default cap is 3% of its steps.
  return NamespacePolicy(ns, max_workers) +
         "  lap: {mode: Training, steps: " + std::to_string(kNodeLapSteps) +
         ", timeoutSeconds: 400, answerWaitSeconds: 120, maxRunShare: 1}\n";
}

int TrainerShellAfterLap(const std::string& pod_uid) {
  for (int pid : PodProcesses(pod_uid, "bash")) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
    std::stringstream text;
    text << in.rdbuf();
    const std::string cmdline = text.str();
    if (cmdline.find(kMaxTextTrainerPattern) != std::string::npos &&
        cmdline.find(kLapRunNameWord) == std::string::npos)
      return pid;
  }
  return 0;
}

std::optional<double> LapEndToTrainerSeconds(const std::string& lap_metrics_file, int trainer) {
  std::error_code ec;
  const auto written = std::filesystem::last_write_time(lap_metrics_file, ec);
  if (ec || trainer <= 0) return std::nullopt;
  // /proc/PID/stat's 22nd field: the start, in clock ticks since boot; /proc/uptime: now, in
  // seconds since boot. The command (field 2) may hold spaces: count from its closing ')'.
  std::ifstream stat("/proc/" + std::to_string(trainer) + "/stat");
  std::string line;
  std::getline(stat, line);
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {}
  std::ifstream uptime_file("/proc/uptime");
  double uptime = 0;
  if (!(uptime_file >> uptime) || field.empty()) return std::nullopt;
  const double started_ago = uptime - std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
  const auto now = std::filesystem::file_time_type::clock::now();
  const std::chrono::duration<double> since_written = now - written;
  return since_written.count() - started_ago;
}

std::string PodAnnotation(const kube::Json& pod, const std::string& key) {
  const kube::Json annotations = pod.value("/metadata/annotations"_json_pointer, kube::Json::object());
  return annotations.is_object() ? annotations.value(key, std::string()) : std::string();
}

}  // namespace graintune::testing
