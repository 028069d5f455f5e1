#include "telemetry/step_log.h"

#include <cmath>

namespace graintune::telemetry {

void StepLog::Restart() {
  std::lock_guard<std::mutex> lock(mu_);
  steps_.clear();
  ++totals_.run;
  totals_.last.reset();
}

void StepLog::Add(const std::vector<StepSample>& samples, int lines, int malformed) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.lines += lines;
  totals_.malformed += malformed;
  for (const StepSample& s : samples) {
    // A step logged again (MaxText re-logs after a restore) replaces the earlier line.
    while (!steps_.empty() && steps_.back().step >= s.step) steps_.pop_back();
    steps_.push_back(s);
    ++totals_.steps;
    totals_.last = s;
    if (steps_.size() > max_steps_) steps_.pop_front();
  }
}

void StepLog::SetProcess(const ProcessFigures& figures) {
  std::lock_guard<std::mutex> lock(mu_);
  totals_.process = figures;
}

StepLog::Totals StepLog::totals() const {
  std::lock_guard<std::mutex> lock(mu_);
  return totals_;
}

nlohmann::json StepLog::ToJson(long since) const {
  std::lock_guard<std::mutex> lock(mu_);
  nlohmann::json steps = nlohmann::json::array();
  for (const StepSample& s : steps_)
    if (s.step > since) steps.push_back(StepJson(s));
  nlohmann::json doc = {{"pod_uid", pod_uid_},
                        {"run", totals_.run},
                        {"steps", std::move(steps)},
                        {"lines", totals_.lines},
                        {"malformed_lines", totals_.malformed}};
  if (totals_.process) doc["process"] = ProcessJson(*totals_.process);
  if (lap_) doc["lap"] = telemetry::ToJson(*lap_);
  if (start_check_) doc["start_check"] = telemetry::ToJson(*start_check_);
  return doc;
}

void StepLog::SetStartCheck(StartCheckReport report) {
  std::lock_guard<std::mutex> lock(mu_);
  start_check_ = std::move(report);
}

void StepLog::SetLap(LapReport lap) {
  std::lock_guard<std::mutex> lock(mu_);
  lap_ = std::move(lap);
}

using nlohmann::json;

Result<StepsDocument> ParseStepsDocument(const std::string& body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("steps") || !doc["steps"].is_array())
    return Status::Error("rejected: the exporter's /steps answer is not a steps document");
  StepsDocument out;
  std::string problem;
  auto reject = [&](const std::string& where) {
    return Status::Error("rejected: the exporter's /steps answer: " + where + problem);
  };
  if (auto uid = doc.find("pod_uid"); uid != doc.end()) {
    if (!uid->is_string() || uid->get_ref<const std::string&>().size() > 128) {
      problem = "pod_uid is not a pod uid";
      return reject("");
    }
    out.pod_uid = uid->get<std::string>();
  }
  out.run = static_cast<int>(BoundedField(doc, "run", 0, 0, 1e9, problem));
  out.malformed_lines = static_cast<long>(BoundedField(doc, "malformed_lines", 0, 0, 1e15, problem));
  if (!problem.empty()) return reject("");
  out.steps = ReadSteps(doc.at("steps"), kMaxStepsPerAnswer, problem);
  if (!problem.empty()) return reject("");
  if (auto p = doc.find("process"); p != doc.end() && p->is_object()) {
    out.process = ReadProcess(*p, problem);
    if (!problem.empty()) return reject("");
  }
  if (auto lap = doc.find("lap"); lap != doc.end() && !lap->is_null()) {
    Result<LapReport> report = ParseLapReport(*lap);
    if (!report.ok()) return Status::Error(report.error());
    out.lap = std::move(report).value();
  }
  if (auto check = doc.find("start_check"); check != doc.end() && !check->is_null()) {
    Result<StartCheckReport> report = StartCheckReportFromJson(*check);
    if (!report.ok()) return Status::Error("rejected: the exporter's /steps answer: " + report.error());
    out.start_check = std::move(report).value();
  }
  return out;
}

}  // namespace graintune::telemetry
