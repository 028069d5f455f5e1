#include "kube/config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>

namespace graintune::kube {
namespace {

namespace fs = std::filesystem;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("graintune-config-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(ConfigTest, ReadsFilesRelativeToTheKubeconfigAndInlineData) {
  Write("ca.crt", "CA PEM");
  Write("client.key", "KEY PEM");
  // "Q0xJRU5UIFBFTQ==" is base64 of "CLIENT PEM".
  const std::string path = Write("kc", R"(
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: local
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
users:
- name: admin
  user: {client-certificate-data: Q0xJRU5UIFBFTQ==, client-key: client.key}
contexts:
- name: other
  context: {cluster: nowhere, user: admin}
- name: dev
  context: {cluster: local, user: admin, namespace: team-a}
)");
  Result<ClientConfig> c = LoadKubeconfig(path);
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->server, "https://127.0.0.1:6443");
  EXPECT_EQ(c->ca_pem, "CA PEM");
  EXPECT_EQ(c->client_cert_pem, "CLIENT PEM");
  EXPECT_EQ(c->client_key_pem, "KEY PEM");
  EXPECT_EQ(c->default_namespace, "team-a");
  Result<ClientConfig> other = LoadKubeconfig(path, "other");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.error().find("unknown cluster 'nowhere'"), std::string::npos);
  EXPECT_FALSE(LoadKubeconfig(path, "missing").ok());
}

TEST_F(ConfigTest, RefusesWhatItCannotHonour) {
  const std::string exec = Write("exec", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://x:443"}}]
users: [{name: u, user: {exec: {command: gke-gcloud-auth-plugin}}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
)");
  Result<ClientConfig> e = LoadKubeconfig(exec);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().find("exec"), std::string::npos);
  const std::string http = Write("http", R"(
current-context: c
clusters: [{name: k, cluster: {server: "http://x:8080"}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  EXPECT_FALSE(LoadKubeconfig(http).ok());
  EXPECT_FALSE(LoadKubeconfig(Write("broken", "{{{: [")).ok());
  EXPECT_FALSE(LoadKubeconfig((dir_ / "absent").string()).ok());
}

TEST_F(ConfigTest, InClusterReadsTheServiceAccountMount) {
  Write("ca.crt", "CA");
  Write("token", "tok\n");
  Write("namespace", "graintune-system");
  setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  Result<ClientConfig> c = InClusterConfig(dir_.string());
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->server, "https://10.0.0.1:443");
  EXPECT_EQ(c->token_file, (dir_ / "token").string());
  EXPECT_EQ(c->default_namespace, "graintune-system");
  unsetenv("KUBERNETES_SERVICE_HOST");
  EXPECT_FALSE(InClusterConfig(dir_.string()).ok());
  unsetenv("KUBERNETES_SERVICE_PORT");
}

}  // namespace
}  // namespace graintune::kube
