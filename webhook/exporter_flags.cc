#include "webhook/exporter_flags.h"

#include "tuner/quantity.h"

namespace graintune::webhook {

const std::vector<server::FlagSpec>& ExporterFlagSpecs() {
  static const ExporterInjection kDefault;
  static const std::vector<server::FlagSpec> kFlags = {
      {.name = "no-exporter", .help = "do not add the exporter sidecar"},
      {.name = "exporter-image", .value_name = "IMAGE", .default_text = kDefault.image,
       .help = "the exporter sidecar's image"},
      {.name = "exporter-port", .value_name = "PORT", .default_text = std::to_string(kDefault.port),
       .help = "the exporter sidecar's port"},
      {.name = "share-process-namespace", .help = "let the exporter see Grain's worker processes"},
      {.name = "exporter-cpu-request", .value_name = "QUANTITY", .default_text = kDefault.cpu_request,
       .help = "the exporter sidecar's cpu request"},
      {.name = "exporter-memory-request", .value_name = "QUANTITY",
       .default_text = kDefault.memory_request, .help = "the exporter sidecar's memory request"},
      {.name = "exporter-memory-limit", .value_name = "QUANTITY", .default_text = kDefault.memory_limit,
       .help = "the exporter sidecar's memory limit"}};
  return kFlags;
}

Result<std::optional<ExporterInjection>> ExporterFromFlags(const server::Flags& flags) {
  if (flags.Bool("no-exporter")) return std::optional<ExporterInjection>();
  ExporterInjection exporter;
  if (std::optional<std::string> image = flags.Get("exporter-image")) {
    if (image->empty()) return Status::Error("--exporter-image must not be empty");
    exporter.image = *image;
  }
  Result<std::optional<int>> port = flags.IntegerIn("exporter-port", 1, 65535);
  if (!port.ok()) return port.status();
  if (*port) exporter.port = **port;
  exporter.share_process_namespace = flags.Bool("share-process-namespace");
  double memory_request = 0, memory_limit = 0;
  for (auto [name, field, bytes] :
       {std::tuple{"exporter-cpu-request", &exporter.cpu_request, static_cast<double*>(nullptr)},
        std::tuple{"exporter-memory-request", &exporter.memory_request, &memory_request},
        std::tuple{"exporter-memory-limit", &exporter.memory_limit, &memory_limit}}) {
    const std::string flag = std::string("--") + name;
    if (std::optional<std::string> text = flags.Get(name)) *field = *text;
    Result<double> value = ParseNonNegativeQuantity(*field, flag);
    if (!value.ok()) return value.status();
    if (*value <= 0) return Status::Error(flag + " must be above zero");
    if (bytes) *bytes = *value;
  }
  if (memory_limit < memory_request)
    return Status::Error("--exporter-memory-limit " + exporter.memory_limit +
                         " is below --exporter-memory-request " + exporter.memory_request);
  return std::optional<ExporterInjection>(exporter);
}

}  // namespace graintune::webhook
