#include "operator/key_events.h"

#include "operator/tuning_key.h"

namespace graintune::op {

void KeyEvents::AddAll(const std::vector<TuningKey>& keys) {
  for (const TuningKey& k : keys) queue_->Add(k);
  ++handled_;
}

void KeyEvents::AddGrainTuning(const nlohmann::json& grain_tuning) {
  if (std::optional<TuningKey> k = TuningKeyOfGrainTuning(grain_tuning)) queue_->Add(*k);
}

kube::InformerHandlers KeyEvents::ForPods() {
  return {
      .on_add = [this](const nlohmann::json& pod) { AddAll(pods_.Set(pod)); },
      .on_update = [this](const nlohmann::json&, const nlohmann::json& pod) { AddAll(pods_.Set(pod)); },
      .on_delete = [this](const nlohmann::json& pod) { AddAll(pods_.Remove(pod)); },
  };
}

kube::InformerHandlers KeyEvents::ForGrainTunings() {
  return {
      .on_add = [this](const nlohmann::json& gt) { AddGrainTuning(gt); ++handled_; },
      .on_update =
          [this](const nlohmann::json& old_gt, const nlohmann::json& gt) {
            // Our own status writes come back as updates: a reconcile that finds nothing to
            // change writes nothing, so this settles after one look.
            AddGrainTuning(old_gt);
            AddGrainTuning(gt);
            ++handled_;
          },
      .on_delete = [this](const nlohmann::json& gt) { AddGrainTuning(gt); ++handled_; },
  };
}

kube::InformerHandlers KeyEvents::ForSelectionChanges() {
  return {
      .on_add = [this](const nlohmann::json&) { AddAll(pods_.Keys()); },
      .on_update = [this](const nlohmann::json&, const nlohmann::json&) { AddAll(pods_.Keys()); },
      .on_delete = [this](const nlohmann::json&) { AddAll(pods_.Keys()); },
  };
}

}  // namespace graintune::op
