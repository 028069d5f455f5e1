#include "kube/fake_api_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "kube/informer.h"

namespace graintune::kube {
namespace {

using namespace std::chrono_literals;

Json Pod(const std::string& name, const std::string& team) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "ns"}, {"labels", {{"team", team}}}}}};
}

TEST(FakeApiServerTest, ServesTheVerbsWithTheApiServersErrors) {
  auto api = std::make_shared<FakeApiServer>();
  std::shared_ptr<Client> client = api->NewClient();
  ApiResult<Json> created = client->Create(resources::kPods, "ns", Pod("a", "x"));
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_TRUE(client->Create(resources::kPods, "ns", Pod("a", "x")).error().IsAlreadyExists());
  EXPECT_TRUE(client->Get(resources::kPods, "ns", "b").error().IsNotFound());

  Json stale = *created;
  Json fresh = *client->Patch(resources::kPods, "ns", "a", PatchType::kMerge,
                              {{"metadata", {{"labels", {{"team", "y"}}}}}});
  EXPECT_EQ(fresh["metadata"]["labels"]["team"], "y");
  EXPECT_TRUE(client->Replace(resources::kPods, "ns", stale).error().IsConflict());

  ApiResult<ObjectList> listed =
      client->List(resources::kPods, "", {.label_selector = "team=y"});
  ASSERT_TRUE(listed.ok());
  EXPECT_EQ(listed->items.size(), 1u);
  EXPECT_EQ(client->List(resources::kPods, "", {.label_selector = "team=x"})->items.size(), 0u);

  EXPECT_TRUE(client->Delete(resources::kPods, "ns", "a", "another-uid").error().IsConflict());
  EXPECT_TRUE(client->Delete(resources::kPods, "ns", "a", fresh["metadata"]["uid"]).ok());
  EXPECT_FALSE(api->Get(resources::kPods, "ns", "a"));
}

TEST(FakeApiServerTest, RecordsRequestsAndInjectsFailures) {
  auto api = std::make_shared<FakeApiServer>();
  std::shared_ptr<Client> client = api->NewClient();
  api->FailNext("POST", "/api/v1/namespaces/ns/pods", 503, "ServiceUnavailable");
  ApiResult<Json> first = client->Create(resources::kPods, "ns", Pod("a", "x"));
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.error().code, 503);
  EXPECT_TRUE(first.error().IsRetryable());
  api->FailNext("GET", "/api/v1/namespaces/ns/pods/a", 0, "Transport");
  EXPECT_EQ(client->Get(resources::kPods, "ns", "a").error().code, 0);
  EXPECT_TRUE(client->Create(resources::kPods, "ns", Pod("a", "x")).ok());
  EXPECT_EQ(api->Count("POST", "/api/v1/namespaces/ns/pods"), 2);
  EXPECT_EQ(api->Requests().size(), 3u);
}

TEST(FakeApiServerTest, AnInformerFollowsItThroughAddsUpdatesAndDeletes) {
  auto api = std::make_shared<FakeApiServer>();
  api->Put(resources::kPods, Pod("a", "x"));
  Informer informer(api->NewClient(), resources::kPods, {.label_selector = "team=x"});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  EXPECT_EQ(informer.List().size(), 1u);
  auto wait_for = [](const std::function<bool()>& condition) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (!condition() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    return condition();
  };
  api->Put(resources::kPods, Pod("b", "x"));
  api->Put(resources::kPods, Pod("c", "other"));
  EXPECT_TRUE(wait_for([&] { return informer.Get("ns", "b").has_value(); }));
  std::shared_ptr<Client> client = api->NewClient();
  ASSERT_TRUE(client->Delete(resources::kPods, "ns", "a").ok());
  EXPECT_TRUE(wait_for([&] { return !informer.Get("ns", "a").has_value(); }));
  EXPECT_FALSE(informer.Get("ns", "c").has_value());
  informer.Stop();
}

TEST(FakeApiServerTest, AnInformersTransformShapesWhatItCachesAndHandsOut) {
  auto api = std::make_shared<FakeApiServer>();
  Json listed = Pod("a", "x");
  listed["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  api->Put(resources::kPods, listed);
  std::atomic<int> seen_with_fields{0}, seen{0};
  Informer informer(api->NewClient(), resources::kPods, {.transform = DropManagedFields},
                    {.on_add = [&](const Json& o) {
                       ++seen;
                       if (o["metadata"].contains("managedFields")) ++seen_with_fields;
                     }});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s));
  Json watched = Pod("b", "x");
  watched["metadata"]["managedFields"] = Json::array({{{"manager", "kubelet"}}});
  api->Put(resources::kPods, watched);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (seen < 2 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  ASSERT_EQ(seen, 2);
  EXPECT_EQ(seen_with_fields, 0);
  EXPECT_FALSE((*informer.Get("ns", "a"))["metadata"].contains("managedFields"));
  EXPECT_FALSE((*informer.Get("ns", "b"))["metadata"].contains("managedFields"));
  EXPECT_EQ((*informer.Get("ns", "b"))["metadata"]["labels"]["team"], "x") << "more than managedFields went";
  informer.Stop();
}

}  // namespace
}  // namespace graintune::kube
