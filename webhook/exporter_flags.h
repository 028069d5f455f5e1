// The command-line flags that configure the exporter sidecar (exporter_injection.h), shared by
// graintune-webhook and `graintune explain` so that both add the same sidecar:
//   --no-exporter                  add none
//   --exporter-image IMAGE         the sidecar's image
//   --exporter-port N              its metrics port (1-65535)
//   --exporter-cpu-request Q       Kubernetes quantities; the memory limit must not be below
//   --exporter-memory-request Q    the request
//   --exporter-memory-limit Q
//   --share-process-namespace      let it see Grain's worker processes
// Errors name the flag; nothing here exits.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "server/flags.h"
#include "webhook/exporter_injection.h"

namespace graintune::webhook {

// The flags above, declared once (defaults: ExporterInjection's), for the webhook's command and
// `graintune explain`.
const std::vector<server::FlagSpec>& ExporterFlagSpecs();

// nullopt when --no-exporter; else the injection with the flags given over the defaults.
Result<std::optional<ExporterInjection>> ExporterFromFlags(const server::Flags& flags);

}  // namespace graintune::webhook
