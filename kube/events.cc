#include "kube/events.h"

#include <cstdio>
#include <random>

#include "base/rfc3339.h"

namespace graintune::kube {

EventRecorder::EventRecorder(std::shared_ptr<Client> client, std::string controller,
                             std::string instance, const Clock& clock)
    : client_(std::move(client)), controller_(std::move(controller)),
      instance_(std::move(instance)), clock_(clock) {}

Status EventRecorder::Record(const Json& regarding, const EventSpec& event) {
  const Json meta = regarding.value("metadata", Json::object());
  const std::string ns = meta.value("namespace", "default");
  const std::string name = meta.value("name", "");
  if (name.empty()) return Status::Error("an event needs an object with metadata.name");
  if (event.reason.empty()) return Status::Error("an event needs a reason");
  thread_local std::mt19937_64 rng(std::random_device{}());
  char suffix[17];
  std::snprintf(suffix, sizeof(suffix), "%016llx", static_cast<unsigned long long>(rng()));
  Json obj = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", name + "." + suffix}, {"namespace", ns}}},
      {"eventTime", FormatRfc3339Micros(clock_.WallNow())},
      {"reportingController", controller_},
      {"reportingInstance", instance_},
      {"action", event.action.empty() ? event.reason : event.action},
      {"reason", event.reason},
      {"note", event.note.substr(0, 1024)},
      {"type", event.type},
      {"regarding",
       {{"apiVersion", regarding.value("apiVersion", "")},
        {"kind", regarding.value("kind", "")},
        {"name", name},
        {"namespace", ns},
        {"uid", meta.value("uid", "")},
        {"resourceVersion", meta.value("resourceVersion", "")}}},
  };
  ApiResult<Json> created = client_->Create(resources::kEvents, ns, obj);
  if (!created.ok()) return Status::Error("recording event " + event.reason + " on " + name +
                                          ": " + created.error().ToString());
  return Status::Ok();
}

}  // namespace graintune::kube
