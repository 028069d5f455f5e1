#include "tuner/demand.h"

#include <cmath>

#include "tuner/figures.h"
#include "tuner/model_catalog.h"

namespace graintune {

Result<Demand> EstimateDemand(const WorkloadShape& workload, const HostShape& host) {
  const double batch = workload.per_device_batch_size.value_or(kMaxTextDefaultBatch);
  const double sequence = workload.max_target_length.value_or(kMaxTextDefaultSequence);
  if (!(batch > 0) || batch > 1e6)
    return Status::Error("per_device_batch_size must be > 0 and sane, got " + Fixed(batch, 3));
  if (!(sequence >= 1) || sequence > 1e8)
    return Status::Error("max_target_length must be >= 1 and sane, got " + Fixed(sequence, 0));
  const int chips = workload.chips_per_host > 0 ? workload.chips_per_host : host.tpu_chips;
  if (chips <= 0 || chips > 64)
    return Status::Error("chips per host unknown: set a google.com/tpu limit or a machine type");
  const ChipGeneration generation =
      workload.generation != ChipGeneration::kUnknown ? workload.generation : host.generation;

  Demand demand;
  demand.tokens_per_step_per_host = batch * sequence * chips;
  demand.element_bytes = batch * chips * sequence * 6 * 4;

  std::string assumed;
  if (!workload.per_device_batch_size) assumed += " batch";
  if (!workload.max_target_length) assumed += " seq";

  if (workload.step_seconds) {
    if (!(*workload.step_seconds > 0) || *workload.step_seconds > 1e5)
      return Status::Error("step time must be > 0 s, got " + Fixed(*workload.step_seconds, 3));
    demand.compute_step_seconds = *workload.step_seconds;
    demand.basis = "step " + Fixed(demand.compute_step_seconds, 2) + " s given";
  } else {
    std::optional<ModelFigures> model =
        FindModel(workload.model_name.empty() ? "default" : workload.model_name);
    std::string model_note;
    if (!model) {
      // An unknown model: assume the small base.yml model, the fastest (hungriest) case.
      model = FindModel("default");
      model_note = " (unknown model '" + workload.model_name + "': assumed ~1B)";
    }
    std::optional<double> peak = PeakTflopsPerChip(generation);
    std::string chip_note;
    if (!peak) {
      peak = PeakTflopsPerChip(ChipGeneration::kV6e);  // the fastest chip: hungriest case
      chip_note = " (chip unknown: assumed v6e)";
    }
    const double flops_per_device_step =
        TrainingFlopsPerToken(*model, sequence) * batch * sequence;
    demand.compute_step_seconds = flops_per_device_step / (*peak * 1e12 * kAssumedMfu);
    demand.step_estimated = true;
    demand.basis = std::string(model->name) + model_note + " on " + ToString(generation) +
                   chip_note + ", est. " + Fixed(demand.compute_step_seconds, 2) + " s/step";
  }
  if (!assumed.empty()) demand.basis += ", MaxText default" + assumed;
  demand.tokens_per_second_per_host =
      demand.tokens_per_step_per_host / demand.compute_step_seconds;
  return demand;
}

}  // namespace graintune
