// Figures graintune needs about MaxText models and TPU chips to estimate a compute step.
//
// Models are keyed by MaxText's `model_name` (configs/models/*.yml); "default" is MaxText's
// base.yml model. Chips carry their public peak bf16 TFLOP/s. Lookups of unknown names return
// nullopt; callers fall back and say so in the reason. Immutable static data.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "tuner/host_shape.h"

namespace graintune {

struct ModelFigures {
  std::string_view name;
  double active_params;   // parameters touched per token (MoE: active experts only)
  int layers;
  int model_dim;          // emb_dim, for attention FLOPs
};

const std::vector<ModelFigures>& AllModels();
std::optional<ModelFigures> FindModel(std::string_view model_name);

// Peak dense bf16 TFLOP/s of one chip; nullopt for kUnknown.
std::optional<double> PeakTflopsPerChip(ChipGeneration generation);

// Training FLOPs per token (forward + backward) of a model at a sequence length:
// 6 x active params + causal attention 6 x layers x model_dim x seq.
double TrainingFlopsPerToken(const ModelFigures& model, double sequence_length);

}  // namespace graintune
