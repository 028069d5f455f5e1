#include "workload/configmap_fetcher.h"

#include <gtest/gtest.h>

#include "base/fake_clock.h"

namespace graintune::workload {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

// A fake API: ConfigMaps by "ns/name", a fetch counter, an injectable failure.
struct FakeApi {
  std::map<std::string, json> objects;
  int calls = 0;
  bool failing = false;
  ConfigMapFetcher::Fetch AsFetch() {
    return [this](const std::string& ns, const std::string& name)
               -> Result<std::optional<json>> {
      ++calls;
      if (failing) return Status::Error("API server unavailable");
      auto it = objects.find(ns + "/" + name);
      if (it == objects.end()) return std::optional<json>();
      return std::optional<json>(it->second);
    };
  }
};

TEST(ConfigMapFetcherTest, OneFetchServesEveryPodUntilTheTtl) {
  FakeApi api;
  api.objects["ml/cfg"] = {{"base.yml", "grain_worker_count: -1\n"}};
  FakeClock clock;
  ConfigMapFetcher fetcher(api.AsFetch(), {.ttl = milliseconds(10000)}, clock);
  for (int pod = 0; pod < 64; ++pod) {
    Result<std::optional<std::string>> v = fetcher.Get("ml", "cfg", "base.yml");
    ASSERT_TRUE(v.ok());
    EXPECT_EQ(**v, "grain_worker_count: -1\n");
  }
  EXPECT_EQ(api.calls, 1);
  EXPECT_FALSE(*fetcher.Get("ml", "cfg", "other.yml"));  // a missing key: no second fetch
  EXPECT_EQ(api.calls, 1);
  // An edit is seen once the entry expires.
  api.objects["ml/cfg"]["base.yml"] = "grain_worker_count: 8\n";
  clock.Advance(milliseconds(10001));
  EXPECT_EQ(**fetcher.Get("ml", "cfg", "base.yml"), "grain_worker_count: 8\n");
  EXPECT_EQ(api.calls, 2);
}

TEST(ConfigMapFetcherTest, NotFoundIsCachedErrorsAreNot) {
  FakeApi api;
  FakeClock clock;
  ConfigMapFetcher fetcher(api.AsFetch(), {}, clock);
  EXPECT_FALSE(*fetcher.Get("ml", "absent", "k"));
  EXPECT_FALSE(*fetcher.Get("ml", "absent", "k"));
  EXPECT_EQ(api.calls, 1);
  api.failing = true;
  Result<std::optional<std::string>> failed = fetcher.Get("ml", "other", "k");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.error().find("API server unavailable"), std::string::npos);
  api.failing = false;
  api.objects["ml/other"] = {{"k", "v"}};
  EXPECT_EQ(**fetcher.Get("ml", "other", "k"), "v");  // tried again
  EXPECT_EQ(api.calls, 3);
}

TEST(ConfigMapFetcherTest, MemoryIsBoundedByEntriesAndBytes) {
  FakeApi api;
  for (int i = 0; i < 100; ++i)
    api.objects["ml/cm" + std::to_string(i)] = {{"k", std::string(1000, 'x')}};
  FakeClock clock;
  ConfigMapFetcher by_count(api.AsFetch(), {.max_entries = 10}, clock);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(by_count.Get("ml", "cm" + std::to_string(i), "k").ok());
  EXPECT_EQ(by_count.entries(), 10u);
  // The most recent stay: cm99 is served from the cache, cm0 is fetched again.
  const int calls = api.calls;
  ASSERT_TRUE(by_count.Get("ml", "cm99", "k").ok());
  EXPECT_EQ(api.calls, calls);
  ASSERT_TRUE(by_count.Get("ml", "cm0", "k").ok());
  EXPECT_EQ(api.calls, calls + 1);

  ConfigMapFetcher by_bytes(api.AsFetch(), {.max_bytes = 5000}, clock);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(by_bytes.Get("ml", "cm" + std::to_string(i), "k").ok());
  EXPECT_LE(by_bytes.bytes(), 5000u);
  EXPECT_EQ(by_bytes.entries(), 4u);  // 1,000 bytes of data and ~70 of bookkeeping each

  // Larger than the whole budget: answered, not cached.
  api.objects["ml/huge"] = {{"k", std::string(10000, 'y')}};
  Result<std::optional<std::string>> huge = by_bytes.Get("ml", "huge", "k");
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ((*huge)->size(), 10000u);
  EXPECT_LE(by_bytes.bytes(), 5000u);
}

}  // namespace
}  // namespace graintune::workload
