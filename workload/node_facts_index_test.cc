#include "workload/node_facts_index.h"

#include <gtest/gtest.h>

namespace graintune::workload {
namespace {

using nlohmann::json;

json Node(const std::string& name, const std::string& cpu, const std::string& heartbeat,
          const std::string& pool = "pool-a") {
  return {{"metadata", {{"name", name}, {"resourceVersion", heartbeat},
                        {"labels", {{"cloud.google.com/gke-nodepool", pool}}}}},
          {"status", {{"allocatable", {{"cpu", cpu}, {"memory", "64Gi"}, {"google.com/tpu", "4"}}},
                      {"conditions", {{{"type", "Ready"}, {"lastHeartbeatTime", heartbeat}}}}}}};
}

std::vector<std::string> Names(const std::vector<NodeFacts>& facts) {
  std::vector<std::string> out;
  for (const NodeFacts& f : facts) out.push_back(f.name);
  return out;
}

TEST(NodeFactsIndexTest, EventsKeepTheFactsAndHeartbeatsRebuildNothing) {
  auto index = std::make_shared<NodeFactsIndex>();
  kube::InformerHandlers handlers = NodeFactsIndex::HandlersFor(index);
  handlers.on_add(Node("b", "8", "t0"));
  handlers.on_add(Node("a", "4", "t0"));
  std::shared_ptr<const std::vector<NodeFacts>> first = index->Snapshot();
  EXPECT_EQ(Names(*first), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ((*first)[1].allocatable_cpu, 8);
  EXPECT_EQ((*first)[1].tpu_chips, 4);

  // Heartbeats: new resourceVersion and conditions, the same facts. The snapshot is shared.
  for (int beat = 1; beat <= 100; ++beat)
    handlers.on_update(Node("a", "4", "t0"), Node("a", "4", "t" + std::to_string(beat)));
  EXPECT_EQ(index->Snapshot(), first);
  EXPECT_EQ(index->SnapshotsBuiltForTest(), 1);

  // A fact changes: the next reader gets it, and the old snapshot is untouched.
  handlers.on_update(Node("a", "4", "t100"), Node("a", "4", "t101", "pool-b"));
  std::shared_ptr<const std::vector<NodeFacts>> second = index->Snapshot();
  EXPECT_NE(second, first);
  EXPECT_EQ((*second)[0].labels.at("cloud.google.com/gke-nodepool"), "pool-b");
  EXPECT_EQ((*first)[0].labels.at("cloud.google.com/gke-nodepool"), "pool-a");
  handlers.on_update(Node("b", "8", "t0"), Node("b", "6", "t1"));
  EXPECT_EQ((*index->Snapshot())[1].allocatable_cpu, 6);

  handlers.on_delete(Node("a", "4", "t2"));
  EXPECT_EQ(Names(*index->Snapshot()), (std::vector<std::string>{"b"}));
  EXPECT_EQ(index->SnapshotsBuiltForTest(), 4);
}

TEST(NodeFactsIndexTest, ASnapshotTakenKeepsItsFactsWhileTheIndexMovesOn) {
  NodeFactsIndex index;
  for (int i = 0; i < 50; ++i) index.Put(Node("n" + std::to_string(100 + i), "4", "t0"));
  std::shared_ptr<const std::vector<NodeFacts>> before = index.Snapshot();
  for (int i = 0; i < 50; i += 2) index.Remove(Node("n" + std::to_string(100 + i), "4", "t1"));
  EXPECT_EQ(before->size(), 50u);
  EXPECT_EQ(index.Snapshot()->size(), 25u);
  EXPECT_EQ(index.Snapshot()->front().name, "n101");
}

TEST(NodeFactsIndexTest, ANodeThatDoesNotParseIsAbsentUntilItDoes) {
  NodeFactsIndex index;
  index.Put(Node("a", "4", "t0"));
  json broken = Node("a", "four", "t1");
  index.Put(broken);  // unreadable cpu: left out, not kept with its old facts
  EXPECT_TRUE(index.Snapshot()->empty());
  index.Put(Node("a", "4", "t2"));
  EXPECT_EQ(Names(*index.Snapshot()), (std::vector<std::string>{"a"}));
  // Hostile shapes: not objects, no metadata, no name. Nothing is added, nothing crashes.
  json wrong_types = Node("a", "4", "t3");
  wrong_types["spec"] = {{"unschedulable", "yes"}};
  wrong_types["metadata"]["labels"] = "pool-a";
  index.Put(wrong_types);  // read as schedulable, without labels
  EXPECT_FALSE((*index.Snapshot())[0].unschedulable);
  EXPECT_TRUE((*index.Snapshot())[0].labels.empty());
  index.Put(Node("a", "4", "t4"));
  json absurd_chips = Node("z", "4", "t0");
  absurd_chips["status"]["allocatable"]["google.com/tpu"] = "1e12";
  index.Put(absurd_chips);  // not a chip count: absent
  for (const json& odd : {json(), json::array(), json("node"), json::object(),
                          json{{"metadata", "x"}}, json{{"metadata", {{"name", 7}}}},
                          json{{"metadata", {{"name", "b"}}}, {"spec", 1}, {"status", "up"}},
                          json{{"metadata", {{"name", "c"}}}, {"status", {{"allocatable", 5}}}}}) {
    index.Put(odd);
    index.Remove(odd);
  }
  EXPECT_EQ(Names(*index.Snapshot()), (std::vector<std::string>{"a"}));
  index.Remove(Node("missing", "4", "t0"));
  EXPECT_EQ(Names(*index.Snapshot()), (std::vector<std::string>{"a"}));
}

}  // namespace
}  // namespace graintune::workload
