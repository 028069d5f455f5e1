#include "operator/operator_flags.h"

#include <gtest/gtest.h>

namespace graintune::op {
namespace {

using namespace std::chrono_literals;

Result<OperatorConfig> From(const std::vector<std::string>& args) {
  Result<server::Flags> flags = server::Flags::ParseDeclared(args, OperatorCommand().flags);
  if (!flags.ok()) return flags.status();
  return OperatorConfigFromFlags(*flags);
}

TEST(OperatorFlagsTest, AbsentFlagsTakeTheirDeclaredDefaults) {
  Result<OperatorConfig> c = From({});
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_TRUE(c->leader_elect);
  EXPECT_EQ(c->lease.lease_name, "graintune-operator");
  EXPECT_EQ(c->lease.lease_namespace, "");  // the configuration's, filled in by the main
  EXPECT_EQ(c->lease.lease_duration, 15000ms);
  EXPECT_EQ(c->lease.renew_deadline, 10000ms);
  EXPECT_EQ(c->lease.retry_period, 2000ms);
  EXPECT_EQ(c->controller.running_requeue, 5000ms);
  EXPECT_EQ(c->controller.progress_write_interval, 30000ms);
  EXPECT_EQ(c->controller.scrape_timeout, 3000ms);
  EXPECT_EQ(c->controller.scrape_concurrency, 8);
  EXPECT_EQ(c->controller.forget_after, 0s);
  EXPECT_EQ(c->http.bind_address, "0.0.0.0");
  EXPECT_EQ(c->http.port, 8081);
  EXPECT_EQ(c->prometheus_url, "");
}

TEST(OperatorFlagsTest, GivenFlagsReachTheirFields) {
  Result<OperatorConfig> c =
      From({"--leader-elect=false", "--lease-namespace", "gt", "--identity", "me", "--resync-period-ms", "1000",
            "--status-progress-interval-ms=0", "--forget-after", "720h", "--port", "9090",
            "--prometheus-url", "http://prom:9090"});
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_FALSE(c->leader_elect);
  EXPECT_EQ(c->lease.lease_namespace, "gt");
  EXPECT_EQ(c->lease.identity, "me");
  EXPECT_EQ(c->controller.running_requeue, 1000ms);
  EXPECT_EQ(c->controller.progress_write_interval, 0ms);
  EXPECT_EQ(c->controller.forget_after, std::chrono::hours(720));
  EXPECT_EQ(c->http.port, 9090);
  EXPECT_EQ(c->prometheus_url, "http://prom:9090");
}

TEST(OperatorFlagsTest, UsageErrorsNameTheFlag) {
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--resync-period-ms", "5"}, "--resync-period-ms"},
           {{"--scrape-concurrency", "0"}, "--scrape-concurrency"},
           {{"--forget-after", "30"}, "--forget-after"},
           {{"--renew-deadline-ms", "20000"}, "lease duration > renew deadline > retry period"}}) {
    Result<OperatorConfig> c = From(args);
    ASSERT_FALSE(c.ok()) << message;
    EXPECT_NE(c.error().find(message), std::string::npos) << c.error();
  }
  // Without leader election its timings are not judged.
  EXPECT_TRUE(From({"--leader-elect=false", "--renew-deadline-ms", "20000"}).ok());
}

TEST(OperatorFlagsTest, TheUsageStartsWithItsSynopsis) {
  const std::string usage = server::UsageText(OperatorCommand());
  EXPECT_EQ(usage.find("usage:\n  graintune-operator [--kubeconfig K] [--leader-elect]"),
            usage.find("usage:"))
      << usage;
  for (const server::FlagSpec& f : OperatorCommand().flags)
    EXPECT_NE(usage.find("\n  --" + f.name), std::string::npos) << f.name;
}

}  // namespace
}  // namespace graintune::op
