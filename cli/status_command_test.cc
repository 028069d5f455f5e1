// graintune status without a cluster: its usage errors, and the kubectl plugin's name. Against
// a real API server: tests/integration/status_integration_test.cc.
#include <gtest/gtest.h>

#include <sstream>

#include "cli/commands.h"

namespace graintune::cli {
namespace {

int RunTool(const Args& args, std::string& out, std::string& err, const std::string& program = "graintune") {
  std::istringstream in;
  std::ostringstream o, e;
  const int code = RunGraintune(args, in, o, e, program);
  out = o.str();
  err = e.str();
  return code;
}

TEST(Status, UsageErrorsNeedNoCluster) {
  std::string out, err;
  EXPECT_EQ(RunTool({"status", "-A", "llama"}, out, err), 2);
  EXPECT_NE(err.find("-A lists every namespace"), std::string::npos) << err;
  EXPECT_EQ(RunTool({"status", "a", "b"}, out, err), 2);
  EXPECT_EQ(RunTool({"status", "--kubeconfig", "/nonexistent/kubeconfig", "llama"}, out, err), 1);
  EXPECT_NE(err.find("/nonexistent/kubeconfig"), std::string::npos) << err;
  EXPECT_EQ(RunTool({"status", "--help"}, out, err), 0);
  EXPECT_NE(out.find("usage: graintune status [NAME]"), std::string::npos) << out;
}

TEST(KubectlPlugin, NamedAfterHowItWasInvoked) {
  EXPECT_EQ(ProgramName("/usr/local/bin/kubectl-graintune"), "kubectl graintune");
  EXPECT_EQ(ProgramName("kubectl-graintune"), "kubectl graintune");
  EXPECT_EQ(ProgramName("build/cli/graintune"), "graintune");
  EXPECT_EQ(ProgramName(""), "graintune");
  std::string out, err;
  EXPECT_EQ(RunTool({"help"}, out, err, "kubectl graintune"), 0);
  EXPECT_NE(out.find("usage: kubectl graintune COMMAND [flags]"), std::string::npos) << out;
  EXPECT_NE(out.find("  status  "), std::string::npos) << out;
  EXPECT_EQ(RunTool({"help", "status"}, out, err, "kubectl graintune"), 0);
  EXPECT_NE(out.find("usage: kubectl graintune status [NAME]"), std::string::npos) << out;
  EXPECT_EQ(RunTool({"nonsense"}, out, err, "kubectl graintune"), 2);
  EXPECT_NE(err.find("kubectl graintune: unknown command 'nonsense'"), std::string::npos) << err;
}

}  // namespace
}  // namespace graintune::cli
