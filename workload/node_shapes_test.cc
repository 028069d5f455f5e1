#include "workload/node_shapes.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace graintune::workload
