// graintune status: a workload's trials from the cluster's GrainTunings (the thin shell over
// cli/trial_table.h: read the kubeconfig, GET or LIST, print).
#include <nlohmann/json.hpp>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/trial_table.h"
#include "kube/client.h"
#include "kube/config.h"

namespace graintune::cli {

const CommandSpec& StatusSpec() {
  static const CommandSpec kSpec = [] {
    CommandSpec spec;
    spec.name = "status";
    spec.summary = "A workload's trials from the cluster: workers, step time, TFLOP/s, verdict.";
    spec.usage = "[NAME] [-n NAMESPACE | -A] [flags]";
    spec.description =
        "Reads the GrainTuning NAME (a workload's name, or its graintune.dev/tuning-key), or\n"
        "every GrainTuning of the namespace, and prints each attempt's trial: workers, mean\n"
        "steady-state step time, TFLOP/s per chip, whether the chips waited for data, and how it\n"
        "compares with the other attempts; then the value the next attempt gets, and why.\n"
        "The cluster is the kubeconfig's (--kubeconfig, else $KUBECONFIG, else ~/.kube/config).";
    spec.flags = {{"namespace", 'n', "NAMESPACE", "the kubeconfig context's", "namespace of the GrainTunings"},
                  {"all-namespaces", 'A', "", "", "every namespace (without NAME)"},
                  {"kubeconfig", 0, "FILE", "$KUBECONFIG or ~/.kube/config", "kubeconfig to use"}};
    spec.max_positionals = 1;
    spec.examples =
        "  graintune status -n team-a llama3-8b-v6e-32\n"
        "  kubectl graintune status -A -o yaml\n";
    return spec;
  }();
  return kSpec;
}

int RunStatus(const Args& args, std::ostream& out, std::ostream& err) {
  const Result<CommandLine> line = ParseCommandLine(StatusSpec(), args);
  if (std::optional<int> code = HelpOrUsageError(StatusSpec(), line, out, err)) return *code;
  const bool all = line->flags.Bool("all-namespaces");
  const std::string name = line->positionals.empty() ? "" : line->positionals[0];
  if (all && (!name.empty() || line->flags.Get("namespace"))) {
    err << "graintune status: -A lists every namespace; it takes neither NAME nor -n\n";
    return 2;
  }
  Result<kube::ClientConfig> config = kube::LoadDefaultConfig(line->flags.Get("kubeconfig").value_or(""));
  if (!config.ok()) {
    err << "graintune status: " << config.error() << "\n";
    return 1;
  }
  const std::string ns = all ? "" : line->flags.Get("namespace").value_or(config->default_namespace);
  kube::ApiResult<std::shared_ptr<kube::Client>> client =
      kube::Client::FromConfig(*config, {.request_timeout = std::chrono::seconds(15)});
  if (!client.ok()) {
    err << "graintune status: " << client.error().ToString() << "\n";
    return 1;
  }
  std::vector<nlohmann::json> objects;
  if (!name.empty()) {
    kube::ApiResult<nlohmann::json> got = (*client)->Get(kube::resources::kGrainTunings, ns, name);
    if (!got.ok()) {
      err << "graintune status: GrainTuning " << ns << "/" << name << ": " << got.error().ToString() << "\n";
      if (got.error().code == 404)
        err << "('kubectl get graintunings -n " << ns << "' lists them; the name is the workload's, or its "
            << "graintune.dev/tuning-key)\n";
      return 1;
    }
    objects.push_back(std::move(got).value());
  } else {
    kube::ApiResult<kube::ObjectList> list = (*client)->List(kube::resources::kGrainTunings, ns);
    if (!list.ok()) {
      err << "graintune status: GrainTunings: " << list.error().ToString() << "\n";
      return 1;
    }
    objects = std::move(list->items);
  }
  if (line->output != OutputFormat::kText) {
    nlohmann::json items = nlohmann::json::array();
    for (const nlohmann::json& o : objects) items.push_back(TuningStatusJson(o));
    WriteStructured(name.empty() ? nlohmann::json{{"items", items}} : items[0], line->output, out);
    return 0;
  }
  if (objects.empty()) out << "No GrainTunings" << (all ? "" : " in namespace " + ns) << ".\n";
  for (size_t i = 0; i < objects.size(); ++i) out << (i ? "\n" : "") << TuningStatusText(objects[i]);
  return 0;
}

}  // namespace graintune::cli
