// KeyEvents: which informer events queue which tuning keys, and the pod index they keep.
#include "operator/key_events.h"

#include <gtest/gtest.h>

namespace graintune::op {
namespace {

using json = nlohmann::json;

json Pod(const std::string& name, const std::string& job, const std::string& workers = "4") {
  json pod = {{"metadata",
               {{"name", name}, {"namespace", "team-a"}, {"uid", "uid-" + name},
                {"labels", {{"graintune.dev/managed", "true"}, {"batch.kubernetes.io/job-name", job}}},
                {"annotations", {{"graintune.dev/attempt", "0"}}}}}};
  if (!workers.empty()) pod["metadata"]["annotations"]["graintune.dev/worker-count"] = workers;
  return pod;
}

std::vector<TuningKey> Drain(WorkQueue& q) {
  std::vector<TuningKey> keys;
  while (std::optional<TuningKey> k = q.TryGet()) {
    keys.push_back(*k);
    q.Done(*k);
  }
  return keys;
}

class KeyEventsTest : public ::testing::Test {
 protected:
  std::shared_ptr<WorkQueue> queue_ = std::make_shared<WorkQueue>();
  KeyEvents events_{queue_};
  const TuningKey llama_{"team-a", "llama"}, gemma_{"team-a", "gemma"};
};

TEST_F(KeyEventsTest, APodEventQueuesItsKeyOnceAndIndexesThePod) {
  kube::InformerHandlers h = events_.ForPods();
  h.on_add(Pod("llama-0", "llama"));
  h.on_add(Pod("llama-1", "llama"));
  h.on_update(Pod("llama-1", "llama"), Pod("llama-1", "llama"));
  EXPECT_EQ(Drain(*queue_), std::vector<TuningKey>{llama_});
  EXPECT_EQ(events_.pods().PodsOf(llama_), (std::vector<std::string>{"llama-0", "llama-1"}));
  h.on_delete(Pod("llama-0", "llama"));
  EXPECT_EQ(Drain(*queue_), std::vector<TuningKey>{llama_});
  EXPECT_EQ(events_.pods().PodsOf(llama_), std::vector<std::string>{"llama-1"});
}

TEST_F(KeyEventsTest, APodThatChangesKeyQueuesTheOldKeyAndTheNew) {
  kube::InformerHandlers h = events_.ForPods();
  h.on_add(Pod("p", "llama"));
  Drain(*queue_);
  h.on_update(Pod("p", "llama"), Pod("p", "gemma"));
  EXPECT_EQ(Drain(*queue_), (std::vector<TuningKey>{llama_, gemma_}));
  EXPECT_TRUE(events_.pods().PodsOf(llama_).empty());
}

TEST_F(KeyEventsTest, APodWithoutAWorkerCountQueuesNothing) {
  events_.ForPods().on_add(Pod("p", "llama", ""));
  EXPECT_TRUE(Drain(*queue_).empty());
  EXPECT_TRUE(events_.pods().Keys().empty());
}

TEST_F(KeyEventsTest, AGrainTuningEventQueuesTheKeyItRecords) {
  const json gt = {{"metadata", {{"namespace", "team-a"}, {"name", "gt-llama"}}},
                   {"spec", {{"tuningKey", "llama"}}}};
  events_.ForGrainTunings().on_delete(gt);
  EXPECT_EQ(Drain(*queue_), std::vector<TuningKey>{llama_});
  events_.ForGrainTunings().on_add(json{{"metadata", {{"namespace", "team-a"}}}});  // no key
  EXPECT_TRUE(Drain(*queue_).empty());
}

TEST_F(KeyEventsTest, APolicyOrNamespaceChangeQueuesEveryKeyWithPods) {
  events_.ForPods().on_add(Pod("llama-0", "llama"));
  events_.ForPods().on_add(Pod("gemma-0", "gemma"));
  Drain(*queue_);
  events_.ForSelectionChanges().on_update(json::object(), json::object());
  EXPECT_EQ(Drain(*queue_), (std::vector<TuningKey>{gemma_, llama_}));  // Keys() order
}

}  // namespace
}  // namespace graintune::op
