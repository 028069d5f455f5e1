// ExporterScraper with a fake fetch on a fake clock: reads in the background, queues a key only
// for new steps, backs off failing exporters, keeps slots for healthy ones, forgets pods.
#include "operator/exporter_scraper.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "base/fake_clock.h"

namespace graintune::op {
namespace {

using namespace std::chrono_literals;

PodFacts Pod(const std::string& uid) {
  PodFacts p;
  p.ns = "team-a";
  p.name = "pod-" + uid;
  p.uid = uid;
  p.pod_ip = "10.0.0.1";
  return p;
}

telemetry::StepsDocument Steps(long last) {
  telemetry::StepsDocument d;
  for (long i = 0; i <= last; ++i) d.steps.push_back({.step = i, .step_time_seconds = 1});
  return d;
}

template <typename F>
void WaitFor(F done) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!done()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "condition not met in 10 s";
    std::this_thread::yield();
  }
}

class ExporterScraperTest : public ::testing::Test {
 protected:
  std::unique_ptr<ExporterScraper> Make(int concurrency = 2) {
    ScraperOptions o{.concurrency = concurrency, .fresh_for = 5s, .backoff_initial = 5s,
                     .backoff_max = 20s, .clock = &clock_};
    return std::make_unique<ExporterScraper>(
        o,
        [this](const PodFacts& pod, const ScraperOptions&, std::stop_token stop) -> Result<telemetry::StepsDocument> {
          ++calls_[pod.uid];
          while (Hangs(pod.uid) && !stop.stop_requested()) std::this_thread::yield();
          std::lock_guard<std::mutex> lock(mu_);
          if (failing_.count(pod.uid)) return Status::Error("refused");
          return Steps(last_step_[pod.uid]);
        },
        [this](const TuningKey& key) {
          std::lock_guard<std::mutex> lock(mu_);
          queued_.push_back(key);
        });
  }
  bool Hangs(const std::string& uid) {
    std::lock_guard<std::mutex> lock(mu_);
    return hang_.count(uid) > 0;
  }
  void Advance(std::chrono::steady_clock::duration d) { clock_.Advance(d); }
  size_t Queued() {
    std::lock_guard<std::mutex> lock(mu_);
    return queued_.size();
  }

  std::mutex mu_;
  FakeClock clock_;
  std::map<std::string, long> last_step_;
  std::set<std::string> failing_, hang_;
  std::map<std::string, std::atomic<int>> calls_{};
  std::vector<TuningKey> queued_;
  const TuningKey key_{"team-a", "llama"};
};

TEST_F(ExporterScraperTest, LatestAnswersAtOnceAndNewStepsQueueTheKey) {
  calls_["a"] = 0;
  last_step_["a"] = 3;
  auto s = Make();
  EXPECT_FALSE(s->Latest(key_, Pod("a")).has_value()) << "nothing read yet";
  WaitFor([&] { return Queued() == 1; });
  std::optional<telemetry::StepsDocument> got = s->Latest(key_, Pod("a"));
  ASSERT_TRUE(got);
  EXPECT_EQ(got->steps.size(), 4u);
  EXPECT_EQ(calls_["a"], 1) << "fresh steps were read again";
  // Stale after fresh_for: read again; the same steps queue nothing.
  Advance(5s);
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return s->Figures().scrapes == 2; });
  EXPECT_EQ(Queued(), 1u);
}

TEST_F(ExporterScraperTest, AFailingExporterBacksOffAndKeepsItsLastSteps) {
  calls_["a"] = 0;
  last_step_["a"] = 1;
  auto s = Make();
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return Queued() == 1; });
  {
    std::lock_guard<std::mutex> lock(mu_);
    failing_.insert("a");
  }
  Advance(5s);
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return s->Figures().failures == 1; });
  EXPECT_EQ(s->Latest(key_, Pod("a"))->steps.size(), 2u) << "a failure lost what was read";
  Advance(4s);
  s->Latest(key_, Pod("a"));
  EXPECT_EQ(calls_["a"], 2) << "retried inside its backoff";
  Advance(1s);
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return calls_["a"] == 3; });
  EXPECT_EQ(s->Figures().backing_off, 1);
}

// A pod runs before its exporter listens: until the first answer every retry comes after the
// first interval, not a doubling one (which would hold a starting pod's first steps back).
TEST_F(ExporterScraperTest, AnExporterNeverReadIsRetriedAtTheFirstIntervalUntilItAnswers) {
  calls_["a"] = 0;
  last_step_["a"] = 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    failing_.insert("a");
  }
  auto s = Make();
  for (int failure = 1; failure <= 4; ++failure) {
    s->Latest(key_, Pod("a"));
    WaitFor([&] { return s->Figures().failures == failure; });
    Advance(4s);
    s->Latest(key_, Pod("a"));
    EXPECT_EQ(calls_["a"], failure) << "retried inside the first interval";
    Advance(1s);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    failing_.clear();
  }
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return Queued() == 1; });
  // Read once, its failures double the wait again: 5 s, then 10 s.
  {
    std::lock_guard<std::mutex> lock(mu_);
    failing_.insert("a");
  }
  Advance(5s);
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return s->Figures().failures == 5; });
  Advance(5s);
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return s->Figures().failures == 6; });
  Advance(9s);
  s->Latest(key_, Pod("a"));
  EXPECT_EQ(calls_["a"], 7) << "retried inside the doubled wait";
  Advance(1s);
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return calls_["a"] == 8; });
}

TEST(ExporterScraperFiguresTest, AReadCountsAsInFlightUntilItsAnswerIsRecorded) {
  // The controller decides which exporters to ask next from KnownOf once no read is in flight:
  // a finished read must never look neither running nor answered. The observe hook runs while
  // the read is between its fetch and its record, and holds it there.
  std::atomic<bool> observing{false}, release{false};
  ScraperOptions o{.concurrency = 1, .backoff_initial = 5s};
  o.observe = [&](std::chrono::duration<double>, bool) {
    observing = true;
    while (!release) std::this_thread::yield();
  };
  ExporterScraper s(
      o, [](const PodFacts&, const ScraperOptions&, std::stop_token) -> Result<telemetry::StepsDocument> {
        return Status::Error("refused");
      },
      nullptr);
  s.Latest(TuningKey{.ns = "team-a", .key = "llama"}, Pod("a"));
  WaitFor([&] { return observing.load(); });
  EXPECT_EQ(s.Figures().in_flight, 1) << "the read left the in-flight count before its answer was recorded";
  EXPECT_EQ(s.KnownOf("a"), ExporterScraper::Known::kNothing);
  release = true;
  WaitFor([&] { return s.Figures().in_flight == 0; });
  EXPECT_EQ(s.KnownOf("a"), ExporterScraper::Known::kFailing);
}

TEST_F(ExporterScraperTest, HangingSuspectsTakeAtMostHalfTheSlots) {
  for (const char* uid : {"bad1", "bad2", "good"}) calls_[uid] = 0;
  failing_ = {"bad1", "bad2"};
  auto s = Make(/*concurrency=*/2);
  s->Latest(key_, Pod("bad1"));
  s->Latest(key_, Pod("bad2"));
  WaitFor([&] { return s->Figures().failures == 2; });
  // Both now suspects, and hanging when read again.
  {
    std::lock_guard<std::mutex> lock(mu_);
    hang_ = {"bad1", "bad2"};
  }
  Advance(10s);
  s->Latest(key_, Pod("bad1"));
  s->Latest(key_, Pod("bad2"));
  WaitFor([&] { return s->Figures().in_flight == 1; });
  // One slot stays free for a healthy exporter, which is read while the suspect hangs.
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_step_["good"] = 0;
  }
  s->Latest(key_, Pod("good"));
  WaitFor([&] { return Queued() == 1; });
  EXPECT_EQ(calls_["bad2"] + calls_["bad1"], 3) << "the second suspect took the healthy slot";
  {
    std::lock_guard<std::mutex> lock(mu_);
    hang_.clear();
  }
}

TEST_F(ExporterScraperTest, AForgottenPodIsNoLongerHeld) {
  calls_["a"] = 0;
  last_step_["a"] = 0;
  auto s = Make();
  s->Latest(key_, Pod("a"));
  WaitFor([&] { return Queued() == 1; });
  s->Forget("a");
  EXPECT_FALSE(s->Latest(key_, Pod("a")).has_value());
}

}  // namespace
}  // namespace graintune::op

#include "server/https_server.h"

namespace graintune::op {
namespace {

// FetchExporterSteps against a real HTTP exporter stand-in answering what its pod's owner makes
// it answer: a refused answer is an error, reported to on_rejected with why, and an answer for
// another pod is never taken for this one.
TEST(FetchExporterStepsTest, RefusedAnswersAreReportedAndNeverFiledForTheWrongPod) {
  std::string answer;
  std::mutex mu;
  server::HttpsServer exporter({}, [&](const server::HttpRequest&) {
    std::lock_guard<std::mutex> lock(mu);
    return server::HttpResponse{200, "application/json", answer};
  });
  ASSERT_TRUE(exporter.Start().ok());
  PodFacts pod;
  pod.ns = "team-a";
  pod.name = "llama-0";
  pod.uid = "uid-llama";
  pod.pod_ip = "127.0.0.1";
  pod.exporter_port = exporter.port();
  std::vector<std::string> rejected;
  ScraperOptions options;
  options.on_rejected = [&](const PodFacts& p, const std::string& why) { rejected.push_back(p.name + ": " + why); };
  auto fetch = [&](const std::string& body) {
    {
      std::lock_guard<std::mutex> lock(mu);
      answer = body;
    }
    return FetchExporterSteps(pod, options, std::stop_token{});
  };

  EXPECT_TRUE(fetch(R"({"pod_uid":"uid-llama","steps":[{"step":1,"step_time_seconds":4.3}]})").ok());
  EXPECT_TRUE(rejected.empty());
  EXPECT_FALSE(fetch(R"({"pod_uid":"uid-llama","steps":[{"step":1,"step_time_seconds":1e308}]})").ok());
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_NE(rejected[0].find("llama-0: rejected: "), std::string::npos) << rejected[0];
  Result<telemetry::StepsDocument> other = fetch(R"({"pod_uid":"uid-of-another-workload","steps":[]})");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().find("answers for pod uid-of-another-workload"), std::string::npos) << other.error();
  EXPECT_EQ(rejected.size(), 2u);
  // An exporter that cannot be reached is no rejected answer.
  exporter.Stop();
  EXPECT_FALSE(FetchExporterSteps(pod, options, std::stop_token{}).ok());
  EXPECT_EQ(rejected.size(), 2u);
}

}  // namespace
}  // namespace graintune::op
