// The client's own logic over a scripted transport: pagination, error mapping, watch framing.
// Its behaviour against a real API server is tested in tests/integration.
#include "kube/client.h"

#include <gtest/gtest.h>

#include <deque>

namespace graintune::kube {
namespace {

class ScriptedTransport : public HttpTransport {
 public:
  std::deque<HttpResponse> responses;
  std::vector<std::string> chunks;  // a watch body, delivered in these pieces
  std::vector<HttpRequest> seen;

  ApiResult<HttpResponse> Send(const HttpRequest& r, std::stop_token) override {
    seen.push_back(r);
    if (responses.empty()) return ApiError{0, "Transport", "connection refused"};
    HttpResponse out = responses.front();
    responses.pop_front();
    return out;
  }
  ApiResult<HttpResponse> Stream(const HttpRequest& r,
                                 const std::function<bool(std::string_view)>& on_chunk,
                                 std::stop_token) override {
    seen.push_back(r);
    for (const std::string& c : chunks)
      if (!on_chunk(c)) break;
    return HttpResponse{200, ""};
  }
};

TEST(ClientTest, ListFollowsContinueTokensAndKeepsTheLastResourceVersion) {
  auto t = std::make_shared<ScriptedTransport>();
  t->responses.push_back({200, R"({"metadata":{"continue":"tok en","resourceVersion":"5"},
                                    "items":[{"metadata":{"name":"a"}}]})"});
  t->responses.push_back({200, R"({"metadata":{"resourceVersion":"7"},
                                    "items":[{"metadata":{"name":"b"}}]})"});
  Client c(t);
  ListOptions lo;
  lo.label_selector = "app=x,tier!=y";
  ApiResult<ObjectList> list = c.List(resources::kPods, "ns", lo);
  ASSERT_TRUE(list.ok()) << list.status().message();
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[1]["metadata"]["name"], "b");
  EXPECT_EQ(list->items[0]["kind"], "Pod");  // list items get their kind back
  EXPECT_EQ(list->resource_version, "7");
  ASSERT_EQ(t->seen.size(), 2u);
  EXPECT_EQ(t->seen[0].path_and_query,
            "/api/v1/namespaces/ns/pods?limit=500&labelSelector=app%3Dx%2Ctier%21%3Dy");
  EXPECT_NE(t->seen[1].path_and_query.find("continue=tok%20en"), std::string::npos);
}

TEST(ClientTest, ErrorsKeepTheApiServersStatusReasonAndMessage) {
  auto t = std::make_shared<ScriptedTransport>();
  t->responses.push_back({403, R"({"kind":"Status","status":"Failure","reason":"Forbidden",
      "message":"jobs.batch is forbidden: User \"x\" cannot list resource \"jobs\"","code":403})"});
  t->responses.push_back({502, "<html>bad gateway</html>"});
  Client c(t);
  ApiResult<Json> a = c.Get(resources::kJobs, "ns", "j");
  ASSERT_FALSE(a.ok());
  EXPECT_TRUE(a.error().IsForbidden());
  EXPECT_EQ(a.error().reason, "Forbidden");
  EXPECT_NE(a.error().message.find("cannot list resource"), std::string::npos);
  EXPECT_FALSE(a.error().IsRetryable());
  ApiResult<Json> b = c.Get(resources::kJobs, "ns", "j");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().code, 502);
  EXPECT_TRUE(b.error().IsRetryable());
  EXPECT_NE(b.error().message.find("bad gateway"), std::string::npos);
  ApiResult<Json> c3 = c.Get(resources::kJobs, "ns", "j");  // no answer at all
  ASSERT_FALSE(c3.ok());
  EXPECT_EQ(c3.error().code, 0);
  EXPECT_TRUE(c3.error().IsRetryable());
}

TEST(ClientTest, AnUnparseableSuccessIsAnErrorNotACrash) {
  auto t = std::make_shared<ScriptedTransport>();
  t->responses.push_back({200, "{not json"});
  Client c(t);
  ApiResult<Json> r = c.Get(resources::kNodes, "", "n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().reason, "BadResponse");
}

TEST(ClientTest, WatchReassemblesEventsSplitAcrossChunksAndTracksBookmarks) {
  auto t = std::make_shared<ScriptedTransport>();
  t->chunks = {R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"10"}}})"
               "\n" R"({"type":"MODI)",
               R"(FIED","object":{"metadata":{"name":"a","resourceVersion":"11"}}})" "\n",
               R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"15"}}})" "\n"};
  Client c(t);
  std::vector<std::string> types;
  WatchOptions wo;
  wo.resource_version = "9";
  ApiResult<WatchEnd> end = c.Watch(resources::kPods, "ns", wo,
                                    [&](const WatchEvent& e) {
                                      types.push_back(e.type);
                                      return true;
                                    });
  ASSERT_TRUE(end.ok()) << end.status().message();
  EXPECT_EQ(types, (std::vector<std::string>{"ADDED", "MODIFIED"}));  // bookmarks are not events
  EXPECT_EQ(end->last_resource_version, "15");
  EXPECT_NE(t->seen[0].path_and_query.find("resourceVersion=9"), std::string::npos);
  EXPECT_NE(t->seen[0].path_and_query.find("allowWatchBookmarks=true"), std::string::npos);
}

TEST(ClientTest, WatchErrorEventForAnExpiredVersionIsGone) {
  auto t = std::make_shared<ScriptedTransport>();
  t->chunks = {R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired",)"
               R"js("message":"too old resource version: 1 (5)"}})js" "\n"};
  Client c(t);
  WatchOptions wo;
  wo.resource_version = "1";
  ApiResult<WatchEnd> end = c.Watch(resources::kPods, "", wo, [](const WatchEvent&) { return true; });
  ASSERT_FALSE(end.ok());
  EXPECT_TRUE(end.error().IsGone());
  EXPECT_NE(end.error().message.find("too old"), std::string::npos);
}

TEST(ClientTest, AWatchEventLargerThanTheCapEndsTheWatchWithAnError) {
  auto t = std::make_shared<ScriptedTransport>();
  t->chunks = {std::string(2048, 'x')};  // no newline, ever
  ClientOptions o;
  o.max_watch_event_bytes = 1024;
  Client c(t, o);
  ApiResult<WatchEnd> end = c.Watch(resources::kPods, "", {}, [](const WatchEvent&) { return true; });
  ASSERT_FALSE(end.ok());
  EXPECT_EQ(end.error().reason, "TooLarge");
}

TEST(ResourceTest, PathsForCoreGroupedClusterScopedAndSubresources) {
  EXPECT_EQ(CollectionPath(resources::kPods, ""), "/api/v1/pods");
  EXPECT_EQ(CollectionPath(resources::kNodes, "ignored"), "/api/v1/nodes");
  EXPECT_EQ(ObjectPath(resources::kGrainTunings, "team", "llama", "status"),
            "/apis/graintune.dev/v1alpha1/namespaces/team/graintunings/llama/status");
  EXPECT_EQ(resources::kJobSets.ApiVersion(), "jobset.x-k8s.io/v1alpha2");
}

}  // namespace
}  // namespace graintune::kube
