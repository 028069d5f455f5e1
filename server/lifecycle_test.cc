#include "server/lifecycle.h"

#include <gtest/gtest.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include <condition_variable>
#include <csignal>
#include <mutex>
#include <string>
#include <vector>

namespace graintune::server {
namespace {

using namespace std::chrono_literals;

// What the lifecycle did, in order, and a way to wait for a step.
class Steps {
 public:
  void Add(const std::string& step) {
    std::lock_guard<std::mutex> lock(mu_);
    steps_.push_back(step);
    cv_.notify_all();
  }
  void WaitFor(const std::string& step) {
    std::unique_lock<std::mutex> lock(mu_);
    ASSERT_TRUE(cv_.wait_for(lock, 10s, [&] {
      return std::find(steps_.begin(), steps_.end(), step) != steps_.end();
    })) << "no " << step;
  }
  std::vector<std::string> All() {
    std::lock_guard<std::mutex> lock(mu_);
    return steps_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> steps_;
};

class LifecycleTest : public ::testing::Test {
 protected:
  LifecycleTest() {
    lifecycle_.AddCache({.start = [this] { steps_.Add("cache started"); },
                         .synced = [this] { return synced_.load(); },
                         .stop = [this] { steps_.Add("cache stopped"); }});
    lifecycle_.AddWorker([this](std::stop_token stop) {
      std::mutex mu;
      std::condition_variable_any cv;
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, stop, [] { return false; });
      steps_.Add("worker stopped");
    });
  }
  void RunInBackground() {
    runner_ = std::jthread([this] {
      lifecycle_.Run([this](bool ready) { steps_.Add(ready ? "ready" : "unready"); });
      steps_.Add("returned");
    });
  }

  Lifecycle lifecycle_{LifecycleOptions{.shutdown_delay = 0ms, .poll = 1ms}};
  std::atomic<bool> synced_{false};
  Steps steps_;
  std::jthread runner_;
};

TEST_F(LifecycleTest, ReadyOnceTheCachesSyncThenUnreadyDrainedAndStoppedInOrder) {
  RunInBackground();
  steps_.WaitFor("cache started");
  EXPECT_FALSE(lifecycle_.CachesSynced());
  synced_ = true;
  steps_.WaitFor("ready");
  lifecycle_.Stop();
  steps_.WaitFor("returned");
  EXPECT_EQ(steps_.All(), (std::vector<std::string>{"cache started", "ready", "unready",
                                                    "worker stopped", "cache stopped", "returned"}));
}

TEST_F(LifecycleTest, SigtermBeginsTheShutdownEvenBeforeTheCachesSync) {
  RunInBackground();
  steps_.WaitFor("cache started");  // the handler is installed before the caches start
  std::raise(SIGTERM);
  steps_.WaitFor("returned");
  EXPECT_EQ(steps_.All(), (std::vector<std::string>{"cache started", "unready", "worker stopped",
                                                    "cache stopped", "returned"}));
}

// Whether a TCP connection to 127.0.0.1:port is accepted.
bool Accepts(unsigned short port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  ::close(fd);
  return ok;
}

TEST(LifecycleDrainTest, AServerIsDrainedAndStoppedAtShutdown) {
  HttpsServerOptions options;
  options.port = 0;
  options.threads = 1;
  HttpsServer server(options, [](const HttpRequest&) { return HttpResponse{200, "text/plain", "ok"}; });
  ASSERT_TRUE(server.Start().ok());
  Lifecycle lifecycle({.shutdown_delay = 0ms, .shutdown_grace = 1s, .poll = 1ms});
  lifecycle.AddServer(server);
  lifecycle.Every([&] { lifecycle.Stop(); });  // the first tick ends it
  EXPECT_TRUE(Accepts(server.port()));
  lifecycle.Run({});
  EXPECT_TRUE(lifecycle.CachesSynced());  // none to wait for
  EXPECT_FALSE(Accepts(server.port())) << "still listening after the shutdown";
}

}  // namespace
}  // namespace graintune::server
