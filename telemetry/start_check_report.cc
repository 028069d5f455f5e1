#include "telemetry/start_check_report.h"

namespace graintune::telemetry {
namespace {

using nlohmann::json;

constexpr size_t kMaxText = 2000;
constexpr double kMaxWorkers = 100000;

std::string ShortText(const json& object, const char* field) {
  const auto it = object.find(field);
  if (it == object.end() || !it->is_string()) return "";
  return it->get_ref<const std::string&>().substr(0, kMaxText);
}

// An integer field within [lo, hi], nullopt when absent or null; `problem` says what is wrong.
std::optional<long> IntegerField(const json& object, const char* field, long lo, long hi, std::string& problem) {
  const auto it = object.find(field);
  if (it == object.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer() || it->get<long>() < lo || it->get<long>() > hi) {
    if (problem.empty()) problem = std::string(field) + " is not a whole number in [" + std::to_string(lo) + ", " +
                                   std::to_string(hi) + "]";
    return std::nullopt;
  }
  return it->get<long>();
}

std::optional<int> CountField(const json& object, const char* field, std::string& problem) {
  // MaxText's -1 (its own pick) is a count the start may say.
  const std::optional<long> v = IntegerField(object, field, -1, static_cast<long>(kMaxWorkers), problem);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

std::optional<bool> BoolField(const json& object, const char* field) {
  const auto it = object.find(field);
  return it != object.end() && it->is_boolean() ? std::optional<bool>(it->get<bool>()) : std::nullopt;
}

}  // namespace

json ToJson(const StartCheckReport& r) {
  json out = {{"checked", r.checked}, {"changed", r.changed}, {"why", r.why}, {"seconds", r.seconds}};
  if (r.admission_value) out["admission_value"] = *r.admission_value;
  if (r.written_value) out["written_value"] = *r.written_value;
  if (r.started_value) out["started_value"] = *r.started_value;
  if (r.fill_value) out["fill_value"] = *r.fill_value;
  json keys = json::object();
  if (!r.dataset_type.empty()) keys["dataset_type"] = r.dataset_type;
  if (!r.checkpoint_dir.empty()) keys["checkpoint_dir"] = r.checkpoint_dir;
  if (r.enable_checkpointing) keys["enable_checkpointing"] = *r.enable_checkpointing;
  if (r.elastic_iterator) keys["grain_use_elastic_iterator"] = *r.elastic_iterator;
  out["keys"] = std::move(keys);
  if (r.checkpoint) {
    json c = {{"layout", r.checkpoint->layout}, {"why", r.checkpoint->why}};
    if (r.checkpoint->step) c["step"] = *r.checkpoint->step;
    if (r.checkpoint->saved_workers) c["saved_workers"] = *r.checkpoint->saved_workers;
    out["checkpoint"] = std::move(c);
  }
  return out;
}

Result<StartCheckReport> StartCheckReportFromJson(const json& d) {
  if (!d.is_object()) return Status::Error("the start check's report is not a JSON object");
  StartCheckReport r;
  std::string problem;
  r.checked = BoolField(d, "checked").value_or(false);
  r.changed = BoolField(d, "changed").value_or(false);
  r.why = ShortText(d, "why");
  r.admission_value = CountField(d, "admission_value", problem);
  r.written_value = CountField(d, "written_value", problem);
  r.started_value = CountField(d, "started_value", problem);
  r.fill_value = CountField(d, "fill_value", problem);
  if (const auto s = d.find("seconds"); s != d.end() && s->is_number() && s->get<double>() >= 0 && s->get<double>() < 1e6)
    r.seconds = s->get<double>();
  if (const auto keys = d.find("keys"); keys != d.end() && keys->is_object()) {
    r.dataset_type = ShortText(*keys, "dataset_type");
    r.checkpoint_dir = ShortText(*keys, "checkpoint_dir");
    r.enable_checkpointing = BoolField(*keys, "enable_checkpointing");
    r.elastic_iterator = BoolField(*keys, "grain_use_elastic_iterator");
  }
  if (const auto c = d.find("checkpoint"); c != d.end() && c->is_object()) {
    SavedIterator saved{.layout = ShortText(*c, "layout"), .why = ShortText(*c, "why")};
    saved.step = IntegerField(*c, "step", 0, 1L << 40, problem);
    saved.saved_workers = CountField(*c, "saved_workers", problem);
    r.checkpoint = std::move(saved);
  }
  if (!problem.empty()) return Status::Error("the start check's report: " + problem);
  return r;
}

Result<StartCheckReport> ParseStartCheckReport(const std::string& text) {
  if (text.size() > kMaxStartCheckReportBytes)
    return Status::Error("the start check's report is larger than " + std::to_string(kMaxStartCheckReportBytes) + " bytes");
  const json d = json::parse(text, nullptr, false);
  if (d.is_discarded()) return Status::Error("the start check's report is not JSON");
  return StartCheckReportFromJson(d);
}

}  // namespace graintune::telemetry
