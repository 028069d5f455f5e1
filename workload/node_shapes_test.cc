#include "workload/node_shapes.h"

#include <gtest/gtest.h>

#include "workload/pod_templates.h"

namespace graintune::workload {
namespace {

NodeFacts Node(const std::string& name, const std::string& accel, double cpu, double mem_gib,
               int chips = 4) {
  return {name,
          {{"cloud.google.com/gke-tpu-accelerator", accel},
           {"cloud.google.com/gke-tpu-topology", "4x8"},
           {"node.kubernetes.io/instance-type", accel == "tpu-v6e-slice" ? "ct6e-standard-4t"
                                                                         : "ct5p-hightpu-4t"}},
          cpu, mem_gib * (1ull << 30), chips};
}

TEST(NodeShapesTest, ReadsAllocatableFromANodeObject) {
  nlohmann::json node = {
      {"metadata", {{"name", "n1"}, {"labels", {{"a", "b"}}}}},
      {"status", {{"allocatable", {{"cpu", "179500m"}, {"memory", "708Gi"}, {"google.com/tpu", "4"}}}}}};
  Result<NodeFacts> f = NodeFactsFromJson(node);
  ASSERT_TRUE(f.ok()) << f.error();
  EXPECT_DOUBLE_EQ(f->allocatable_cpu, 179.5);
  EXPECT_DOUBLE_EQ(f->allocatable_memory_bytes, 708.0 * (1ull << 30));
  EXPECT_EQ(f->tpu_chips, 4);
  EXPECT_EQ(f->labels.at("a"), "b");
  node["status"]["allocatable"]["memory"] = "lots";
  Result<NodeFacts> bad = NodeFactsFromJson(node);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("n1"), std::string::npos);
  EXPECT_FALSE(NodeFactsFromJson(nlohmann::json::array()).ok());
}

// The Node cache keeps what NodeFactsFromJson reads and nothing else; the facts are the same.
TEST(NodeShapesTest, KeepOnlyNodeFactsKeepsTheFactsAndDropsTheRest) {
  nlohmann::json node = {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", "n1"}, {"uid", "u1"}, {"resourceVersion", "42"}, {"labels", {{"a", "b"}}},
                    {"annotations", {{"big", std::string(4096, 'x')}}},
                    {"managedFields", nlohmann::json::array({{{"manager", "kubelet"}}})}}},
      {"spec", {{"unschedulable", true}, {"podCIDR", "10.0.0.0/24"}, {"taints", nlohmann::json::array()}}},
      {"status", {{"allocatable", {{"cpu", "179500m"}, {"memory", "708Gi"}, {"google.com/tpu", "4"}}},
                  {"capacity", {{"cpu", "180"}}},
                  {"images", nlohmann::json::array({{{"names", {"gcr.io/x"}}, {"sizeBytes", 1}}})},
                  {"conditions", nlohmann::json::array({{{"type", "Ready"}}})}}}};
  const Result<NodeFacts> before = NodeFactsFromJson(node);
  ASSERT_TRUE(before.ok());
  KeepOnlyNodeFacts(node);
  EXPECT_EQ(node, (nlohmann::json{
                      {"apiVersion", "v1"},
                      {"kind", "Node"},
                      {"metadata", {{"name", "n1"}, {"uid", "u1"}, {"resourceVersion", "42"}, {"labels", {{"a", "b"}}}}},
                      {"spec", {{"unschedulable", true}}},
                      {"status", {{"allocatable", {{"cpu", "179500m"}, {"memory", "708Gi"}, {"google.com/tpu", "4"}}}}}}));
  const Result<NodeFacts> after = NodeFactsFromJson(node);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->name, before->name);
  EXPECT_EQ(after->labels, before->labels);
  EXPECT_EQ(after->unschedulable, before->unschedulable);
  EXPECT_DOUBLE_EQ(after->allocatable_cpu, before->allocatable_cpu);
  EXPECT_DOUBLE_EQ(after->allocatable_memory_bytes, before->allocatable_memory_bytes);
  EXPECT_EQ(after->tpu_chips, before->tpu_chips);
  // Whatever a hostile or odd object holds, the result is an object or left alone.
  nlohmann::json odd = {{"metadata", "x"}, {"status", 3}};
  KeepOnlyNodeFacts(odd);
  EXPECT_EQ(odd, nlohmann::json::object());
  nlohmann::json not_object = nlohmann::json::array();
  KeepOnlyNodeFacts(not_object);
  EXPECT_EQ(not_object, nlohmann::json::array());
}

TEST(NodeShapesTest, SelectorAndRequiredTermsDecideWhichNodesMatch) {
  const auto labels = Node("n", "tpu-v6e-slice", 1, 1).labels;
  NodeSelection s;
  s.node_selector = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice"}};
  EXPECT_TRUE(NodeMatches(labels, s));
  s.required_terms = {{{"cloud.google.com/gke-tpu-topology", {"2x2"}}},
                      {{"cloud.google.com/gke-tpu-topology", {"4x4", "4x8"}}}};
  EXPECT_TRUE(NodeMatches(labels, s));  // the second term matches
  s.required_terms = {{{"cloud.google.com/gke-tpu-topology", {"2x2"}}}};
  EXPECT_FALSE(NodeMatches(labels, s));
  s.required_terms.clear();
  s.node_selector["missing-label"] = "";
  EXPECT_FALSE(NodeMatches(labels, s));  // an absent label does not equal ""
}

TEST(NodeShapesTest, UsesTheTightestMatchingTpuNode) {
  NodeSelection v6e;
  v6e.node_selector = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice"}};
  std::vector<NodeFacts> nodes = {Node("big", "tpu-v6e-slice", 179.5, 708),
                                  Node("small", "tpu-v6e-slice", 120, 500),
                                  Node("v5p", "tpu-v5p-slice", 10, 10),
                                  Node("cpu-only", "tpu-v6e-slice", 1, 1, 0)};
  std::optional<HostShape> s = ShapeFromNodes(nodes, v6e);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->cpu_cores, 120);
  EXPECT_DOUBLE_EQ(s->memory_bytes, 500.0 * (1ull << 30));
  EXPECT_EQ(s->tpu_chips, 4);
  EXPECT_EQ(s->generation, ChipGeneration::kV6e);
  EXPECT_EQ(s->machine_type, "ct6e-standard-4t");
  EXPECT_EQ(s->source, "node small (tightest of 2 matching nodes)");

  nodes[1].unschedulable = true;  // cordoned nodes take no new pods
  EXPECT_DOUBLE_EQ(ShapeFromNodes(nodes, v6e)->cpu_cores, 179.5);
  NodeSelection v4;
  v4.node_selector = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v4-podslice"}};
  EXPECT_FALSE(ShapeFromNodes(nodes, v4).has_value());
}

TEST(NodeShapesTest, ACpuHostSelectionIsSizedFromCpuNodesOnly) {
  NodeFacts cpu{"cpu-1", {{"cloud.google.com/gke-nodepool", "cpu-np"},
                          {"node.kubernetes.io/instance-type", "n2-standard-64"}},
                63.5, 240.0 * (1ull << 30), 0};
  NodeFacts other_pool{"cpu-2", {{"cloud.google.com/gke-nodepool", "default-pool"}}, 3.5, 12.0 * (1ull << 30), 0};
  NodeFacts tpu = Node("tpu-1", "tpu-v6e-slice", 179.5, 708);
  tpu.labels["cloud.google.com/gke-nodepool"] = "cpu-np";  // even in the same pool
  NodeSelection head;
  head.node_selector = {{"cloud.google.com/gke-nodepool", "cpu-np"}};
  ASSERT_FALSE(SelectsTpuHost(head));
  std::optional<HostShape> s = ShapeFromNodes({tpu, cpu, other_pool}, head);
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->cpu_cores, 63.5);
  EXPECT_EQ(s->tpu_chips, 0);
  EXPECT_EQ(s->machine_type, "n2-standard-64");
  EXPECT_EQ(s->source, "node cpu-1 (tightest of 1 matching node)");
  // A pod that asks for chips is a TPU pod wherever it selects.
  head.tpu_chips = 4;
  EXPECT_TRUE(SelectsTpuHost(head));
  EXPECT_DOUBLE_EQ(ShapeFromNodes({tpu, cpu, other_pool}, head)->cpu_cores, 179.5);
}

// xpk's v6e-8 runs 4 chips per VM on a 2x4 topology: a node labelled 2x4 without an instance type
// is a ct6e-standard-4t unless the node itself has 8 chips.
TEST(NodeShapesTest, XpkV6e8NodesAreFourChipHosts) {
  NodeFacts n{"v6e-8-0", {{"cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice"},
                          {"cloud.google.com/gke-tpu-topology", "2x4"}},
              179.5, 708.0 * (1ull << 30), 4};
  NodeSelection s;
  s.node_selector = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice"},
                     {"cloud.google.com/gke-tpu-topology", "2x4"}};
  EXPECT_EQ(ShapeFromNodes({n}, s)->machine_type, "ct6e-standard-4t");
  n.tpu_chips = 8;
  EXPECT_EQ(ShapeFromNodes({n}, s)->machine_type, "ct6e-standard-8t");
}

// With no Node yet, the table sizes xpk's v6e-8 pod (google.com/tpu: 4) as one of its two
// ct6e-standard-4t VMs, a pod asking for 8 chips as the single-host -8t, and a CPU host not at all.
TEST(NodeShapesTest, XpkTopologiesFromTheTableFollowThePodsChips) {
  MachineTypeTableShapes table;
  NodeSelection s;
  s.node_selector = {{"cloud.google.com/gke-tpu-accelerator", "tpu-v6e-slice"},
                     {"cloud.google.com/gke-tpu-topology", "2x4"}};
  s.tpu_chips = 4;
  EXPECT_EQ(table.ShapeFor(s)->machine_type, "ct6e-standard-4t");
  s.tpu_chips = 8;
  EXPECT_EQ(table.ShapeFor(s)->machine_type, "ct6e-standard-8t");
  NodeSelection head = NodeSelectionOf(nlohmann::json::parse(R"({
      "nodeSelector": {"cloud.google.com/gke-nodepool": "cpu-np"},
      "containers": [{"name": "jax-tpu", "resources": {"limits": {"cpu": "24", "memory": "100G"}}}]})"));
  EXPECT_EQ(head.tpu_chips, 0);
  EXPECT_EQ(NodeSelectionOf(nlohmann::json::parse(R"({"initContainers": [{"name": "i"}],
      "containers": [{"resources": {"limits": {"google.com/tpu": "4"}}},
                     {"resources": {"limits": {"google.com/tpu": 8}}}]})")).tpu_chips, 8);
  Result<HostShape> none = table.ShapeFor(head);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().find("CPU host"), std::string::npos) << none.error();
}

}  // namespace
}  // namespace graintune::workload
