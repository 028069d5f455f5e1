#include "webhook/exporter_flags.h"

#include <gtest/gtest.h>

#include <set>

namespace graintune::webhook {
namespace {

Result<std::optional<ExporterInjection>> From(const std::vector<std::string>& args) {
  Result<server::Flags> flags = server::Flags::ParseDeclared(args, ExporterFlagSpecs());
  if (!flags.ok()) return flags.status();
  return ExporterFromFlags(*flags);
}

TEST(ExporterFlagsTest, DefaultsFlagsAndNone) {
  Result<std::optional<ExporterInjection>> plain = From({});
  ASSERT_TRUE(plain.ok() && plain->has_value());
  EXPECT_EQ((*plain)->memory_limit, "64Mi");
  Result<std::optional<ExporterInjection>> set =
      From({"--exporter-image", "r.example/e:1", "--exporter-port", "9555",
            "--exporter-cpu-request=25m", "--exporter-memory-request=48Mi",
            "--exporter-memory-limit=96Mi", "--share-process-namespace"});
  ASSERT_TRUE(set.ok()) << set.error();
  EXPECT_EQ((*set)->image, "r.example/e:1");
  EXPECT_EQ((*set)->port, 9555);
  EXPECT_EQ((*set)->cpu_request, "25m");
  EXPECT_EQ((*set)->memory_request, "48Mi");
  EXPECT_EQ((*set)->memory_limit, "96Mi");
  EXPECT_TRUE((*set)->share_process_namespace);
  Result<std::optional<ExporterInjection>> none = From({"--no-exporter"});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST(ExporterFlagsTest, BadValuesNameTheirFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  } cases[] = {
      {{"--exporter-port", "0"}, "--exporter-port"},
      {{"--exporter-cpu-request", "lots"}, "--exporter-cpu-request"},
      {{"--exporter-memory-request", "0"}, "--exporter-memory-request must be above zero"},
      {{"--exporter-memory-request", "128Mi", "--exporter-memory-limit", "64Mi"},
       "--exporter-memory-limit 64Mi is below --exporter-memory-request 128Mi"},
      {{"--exporter-image", ""}, "--exporter-image must not be empty"},
  };
  for (const Case& c : cases) {
    Result<std::optional<ExporterInjection>> r = From(c.args);
    ASSERT_FALSE(r.ok()) << c.message;
    EXPECT_NE(r.error().find(c.message), std::string::npos) << r.error();
  }
}

}  // namespace
}  // namespace graintune::webhook
