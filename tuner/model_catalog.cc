#include "tuner/model_catalog.h"

namespace graintune {

const std::vector<ModelFigures>& AllModels() {
  // Parameter counts from the models' published configs (as MaxText's configs/models/ hold them).
  static const std::vector<ModelFigures> kModels = {
      {"default", 1.1e9, 16, 2048},
      {"llama3.2-1b", 1.24e9, 16, 2048},
      {"gemma2-2b", 2.6e9, 26, 2304},
      {"gemma-2b", 2.5e9, 18, 2048},
      {"llama3.2-3b", 3.2e9, 28, 3072},
      {"llama2-7b", 6.7e9, 32, 4096},
      {"mistral-7b", 7.2e9, 32, 4096},
      {"llama3-8b", 8.0e9, 32, 4096},
      {"llama3.1-8b", 8.0e9, 32, 4096},
      {"gemma-7b", 8.5e9, 28, 3072},
      {"gemma2-9b", 9.2e9, 42, 3584},
      {"llama2-13b", 13.0e9, 40, 5120},
      {"mixtral-8x7b", 12.9e9, 32, 4096},
      {"gemma2-27b", 27.2e9, 46, 4608},
      {"llama2-70b", 69.0e9, 80, 8192},
      {"llama3-70b", 70.6e9, 80, 8192},
      {"llama3.1-70b", 70.6e9, 80, 8192},
      {"llama3.1-405b", 405.0e9, 126, 16384},
  };
  return kModels;
}

std::optional<ModelFigures> FindModel(std::string_view model_name) {
  for (const ModelFigures& model : AllModels()) {
    if (model.name == model_name) return model;
  }
  return std::nullopt;
}

std::optional<double> PeakTflopsPerChip(ChipGeneration generation) {
  switch (generation) {
    case ChipGeneration::kV4: return 275.0;
    case ChipGeneration::kV5e: return 197.0;
    case ChipGeneration::kV5p: return 459.0;
    case ChipGeneration::kV6e: return 918.0;
    case ChipGeneration::kUnknown: break;
  }
  return std::nullopt;
}

double TrainingFlopsPerToken(const ModelFigures& model, double sequence_length) {
  return 6.0 * model.active_params +
         6.0 * model.layers * static_cast<double>(model.model_dim) * sequence_length;
}

}  // namespace graintune
