// In-memory sources for tests and for the standalone webhook (no --kubeconfig). Thread-safe
// for concurrent reads after setup; the setters are for test setup only.
#pragma once

#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "workload/learned_figures.h"
#include "workload/sources.h"

namespace graintune::workload {

class InMemoryHistory : public HistorySource {
 public:
  void Put(const std::string& ns, const std::string& key, TuningHistory history) {
    std::lock_guard<std::mutex> lock(mu_);
    histories_[{ns, key}] = std::move(history);
  }
  // A GrainTuning object whose learned figures (learned_figures.h) later lookups may use.
  void PutGrainTuning(nlohmann::json grain_tuning) {
    std::lock_guard<std::mutex> lock(mu_);
    grain_tunings_.push_back(std::move(grain_tuning));
  }
  void FailWithForTest(std::string message) { failure_ = std::move(message); }

  Result<std::optional<TuningHistory>> Lookup(const std::string& ns,
                                              const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_.empty()) return Status::Error(failure_);
    auto it = histories_.find({ns, key});
    if (it == histories_.end()) return std::optional<TuningHistory>();
    return std::optional<TuningHistory>(it->second);
  }
  Result<std::optional<RunRecord>> RunFor(const std::string& ns,
                                          const std::string& checkpoint_dir) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!failure_.empty()) return Status::Error(failure_);
    for (const auto& [where, history] : histories_)
      if (where.first == ns)
        if (auto run = history.runs.find(checkpoint_dir); run != history.runs.end())
          return std::optional<RunRecord>(run->second);
    return std::optional<RunRecord>();
  }
  std::optional<LearnedDatasetProfile> LearnedProfile(const LearningReach& reach,
                                                      const std::string& dataset,
                                                      const std::string& machine_type) override {
    std::lock_guard<std::mutex> lock(mu_);
    return NewestLearnedProfile(Visitor(), reach, dataset, machine_type);
  }
  std::optional<LearnedDemand> LearnedDemandFor(const LearningReach& reach,
                                                const std::string& key) override {
    std::lock_guard<std::mutex> lock(mu_);
    return NewestLearnedDemand(Visitor(), reach, key);
  }

 private:
  std::mutex mu_;
  GrainTuningVisitor Visitor() const {
    return [this](const std::function<void(const nlohmann::json&)>& visit) {
      for (const nlohmann::json& gt : grain_tunings_) visit(gt);
    };
  }
  std::map<std::pair<std::string, std::string>, TuningHistory> histories_;
  std::vector<nlohmann::json> grain_tunings_;
  std::string failure_;
};

class InMemoryConfigMaps : public ConfigMapSource {
 public:
  void Put(const std::string& ns, const std::string& name, const std::string& key,
           std::string data) {
    data_[{ns, name, key}] = std::move(data);
  }
  void FailWithForTest(std::string message) { failure_ = std::move(message); }

  Result<std::optional<std::string>> Get(const std::string& ns, const std::string& name,
                                         const std::string& key) override {
    if (!failure_.empty()) return Status::Error(failure_);
    auto it = data_.find({ns, name, key});
    if (it == data_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Result<std::optional<std::map<std::string, std::string>>> Data(const std::string& ns,
                                                                 const std::string& name) override {
    if (!failure_.empty()) return Status::Error(failure_);
    std::optional<std::map<std::string, std::string>> all;
    for (auto it = data_.lower_bound({ns, name, ""});
         it != data_.end() && std::get<0>(it->first) == ns && std::get<1>(it->first) == name; ++it) {
      if (!all) all.emplace();
      (*all)[std::get<2>(it->first)] = it->second;
    }
    return all;
  }

 private:
  std::map<std::tuple<std::string, std::string, std::string>, std::string> data_;
  std::string failure_;
};

class FixedPolicy : public PolicySource {
 public:
  explicit FixedPolicy(Policy policy = Policy{}) : policy_(std::move(policy)) {}
  Policy PolicyFor(const std::string&, const std::map<std::string, std::string>&) override {
    return policy_;
  }

 private:
  Policy policy_;
};

// A node-shape source that always answers the same (or fails), for tests.
class FixedShape : public NodeShapeSource {
 public:
  explicit FixedShape(Result<HostShape> shape) : shape_(std::move(shape)) {}
  Result<HostShape> ShapeFor(const NodeSelection&) override { return shape_; }

 private:
  Result<HostShape> shape_;
};

}  // namespace graintune::workload
