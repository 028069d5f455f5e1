// The kube/ client layer against a real kube-apiserver (tests/controlplane): CRUD with typed
// errors, pagination, patches, watches across an API server restart, conflict retry with two
// writers, RBAC refusals, Events.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "kube/backoff.h"
#include "kube/client.h"
#include "kube/events.h"
#include "kube/informer.h"
#include "tests/controlplane/shared_control_plane.h"

namespace graintune::kube {
namespace {

using testing::ControlPlaneKind;

Json ConfigMap(const std::string& ns, const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"data", {{"value", value}}}};
}

void CreateNamespace(Client& c, const std::string& ns) {
  ApiResult<Json> r = c.Create(resources::kNamespaces, "",
                               {{"apiVersion", "v1"}, {"kind", "Namespace"},
                                {"metadata", {{"name", ns}}}});
  ASSERT_TRUE(r.ok() || r.error().IsAlreadyExists()) << r.status().message();
}

// name -> resourceVersion of what a fresh list says.
std::map<std::string, std::string> Snapshot(const std::vector<Json>& items) {
  std::map<std::string, std::string> out;
  for (const Json& i : items)
    out[i["metadata"]["name"].get<std::string>()] = i["metadata"]["resourceVersion"];
  return out;
}

TEST(KubeClientIntegration, CrudPaginationPatchesAndTypedErrors) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> c = cp->AdminClient();
  CreateNamespace(*c, "crud");
  for (int i = 0; i < 7; ++i)
    ASSERT_TRUE(c->Create(resources::kConfigMaps, "crud", ConfigMap("crud", "cm-" + std::to_string(i), "x")).ok());

  ListOptions small_pages;
  small_pages.page_size = 3;  // 7 objects: three pages, two continue tokens
  ApiResult<ObjectList> list = c->List(resources::kConfigMaps, "crud", small_pages);
  ASSERT_TRUE(list.ok()) << list.status().message();
  std::set<std::string> names;
  for (const Json& i : list->items)
    if (i["metadata"]["name"].get<std::string>().rfind("cm-", 0) == 0)
      names.insert(i["metadata"]["name"]);
  EXPECT_EQ(names.size(), 7u);
  EXPECT_FALSE(list->resource_version.empty());

  ApiResult<Json> missing = c->Get(resources::kConfigMaps, "crud", "absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().IsNotFound());
  EXPECT_NE(missing.error().message.find("\"absent\" not found"), std::string::npos)
      << missing.error().message;
  ApiResult<Json> dup = c->Create(resources::kConfigMaps, "crud", ConfigMap("crud", "cm-0", "y"));
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(dup.error().IsAlreadyExists());

  ASSERT_TRUE(c->Patch(resources::kConfigMaps, "crud", "cm-1", PatchType::kMerge,
                       {{"data", {{"merged", "1"}}}}).ok());
  ASSERT_TRUE(c->Patch(resources::kConfigMaps, "crud", "cm-1", PatchType::kJson,
                       Json::array({{{"op", "replace"}, {"path", "/data/value"}, {"value", "j"}}}))
                  .ok());
  ApiResult<Json> applied = c->Apply(resources::kConfigMaps, "crud", ConfigMap("crud", "cm-ssa", "a"));
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ((*applied)["metadata"]["managedFields"][0]["manager"], "graintune");
  ApiResult<Json> got = c->Get(resources::kConfigMaps, "crud", "cm-1");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ((*got)["data"]["merged"], "1");
  EXPECT_EQ((*got)["data"]["value"], "j");

  // A stale resourceVersion on replace is a Conflict, not a silent overwrite.
  Json stale = *got;
  ASSERT_TRUE(c->Patch(resources::kConfigMaps, "crud", "cm-1", PatchType::kMerge,
                       {{"data", {{"value", "newer"}}}}).ok());
  stale["data"]["value"] = "older";
  ApiResult<Json> conflict = c->Replace(resources::kConfigMaps, "crud", stale);
  ASSERT_FALSE(conflict.ok());
  EXPECT_TRUE(conflict.error().IsConflict());

  ApiResult<Json> bad_patch = c->Patch(resources::kConfigMaps, "crud", "cm-1", PatchType::kJson,
      Json::array({{{"op", "test"}, {"path", "/data/value"}, {"value", "nope"}}}));
  ASSERT_FALSE(bad_patch.ok());
  EXPECT_GE(bad_patch.error().code, 400);

  // A uid precondition: another object under the name is not deleted.
  ApiResult<Json> wrong_uid = c->Delete(resources::kConfigMaps, "crud", "cm-0", "not-its-uid");
  ASSERT_FALSE(wrong_uid.ok());
  EXPECT_TRUE(wrong_uid.error().IsConflict()) << wrong_uid.error().ToString();
  ApiResult<Json> cm0 = c->Get(resources::kConfigMaps, "crud", "cm-0");
  ASSERT_TRUE(cm0.ok());
  ASSERT_TRUE(c->Delete(resources::kConfigMaps, "crud", "cm-0", (*cm0)["metadata"]["uid"]).ok());
  EXPECT_TRUE(c->Get(resources::kConfigMaps, "crud", "cm-0").error().IsNotFound());
  ASSERT_TRUE(c->Delete(resources::kConfigMaps, "crud", "cm-1").ok());
  EXPECT_TRUE(c->Get(resources::kConfigMaps, "crud", "cm-1").error().IsNotFound());
}

TEST(KubeClientIntegration, UnreachableServerIsAnErrorValueWithinTheTimeout) {
  ClientConfig nowhere;
  nowhere.server = "https://127.0.0.1:1";  // nothing listens on port 1
  ClientOptions o;
  o.request_timeout = std::chrono::seconds(5);
  auto c = Client::FromConfig(nowhere, o);
  ASSERT_TRUE(c.ok());
  ApiResult<Json> r = (*c)->Get(resources::kNodes, "", "n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, 0);
  EXPECT_TRUE(r.error().IsRetryable());
}

TEST(KubeClientIntegration, InformerLosesNoEventAcrossAnApiServerRestart) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> c = cp->AdminClient();
  CreateNamespace(*c, "watched");
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(c->Create(resources::kConfigMaps, "watched",
                          ConfigMap("watched", "before-" + std::to_string(i), "0")).ok());
  std::atomic<int> adds{0}, updates{0}, deletes{0};
  InformerOptions io;
  io.ns = "watched";
  Informer informer(c, resources::kConfigMaps, io,
                    {.on_add = [&](const Json&) { ++adds; },
                     .on_update = [&](const Json&, const Json&) { ++updates; },
                     .on_delete = [&](const Json&) { ++deletes; }});
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(std::chrono::seconds(20)));
  const int initial = adds.load();  // the 5 plus kube-root-ca.crt if the controller made it

  ASSERT_TRUE(cp->StopApiServer().ok());
  // While the API server is down the informer keeps what it had and reports the failure.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_EQ(informer.List().size(), static_cast<size_t>(initial));
  ASSERT_TRUE(cp->StartApiServer().ok());

  for (int i = 0; i < 5; ++i) {
    auto made = c->Create(resources::kConfigMaps, "watched", ConfigMap("watched", "after-" + std::to_string(i), "0"));
    ASSERT_TRUE(made.ok()) << "creating after-" << i << " once the API server is back: " << made.error().ToString();
  }
  ASSERT_TRUE(c->Patch(resources::kConfigMaps, "watched", "before-1", PatchType::kMerge,
                       {{"data", {{"value", "1"}}}}).ok());
  ASSERT_TRUE(c->Delete(resources::kConfigMaps, "watched", "before-2").ok());

  ApiResult<ObjectList> fresh = c->List(resources::kConfigMaps, "watched");
  ASSERT_TRUE(fresh.ok());
  const auto want = Snapshot(fresh->items);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Snapshot(informer.List()) != want && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Snapshot(informer.List()), want) << "last error: " << informer.LastError();
  EXPECT_EQ(adds.load(), initial + 5);
  EXPECT_GE(updates.load(), 1);
  EXPECT_EQ(deletes.load(), 1);
  informer.Stop();
}

TEST(KubeClientIntegration, ConflictRetryUnderTwoConcurrentWriters) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> c = cp->AdminClient();
  CreateNamespace(*c, "race");
  ASSERT_TRUE(c->Create(resources::kConfigMaps, "race", ConfigMap("race", "counter", "0")).ok());
  constexpr int kPerWriter = 25;
  std::atomic<int> mutations{0};
  auto writer = [&] {
    for (int i = 0; i < kPerWriter; ++i) {
      ApiResult<Json> r = UpdateWithRetry(*c, resources::kConfigMaps, "race", "counter", "",
                                          [&](Json& cm) {
                                            ++mutations;
                                            const int v = std::stoi(cm["data"]["value"].get<std::string>());
                                            cm["data"]["value"] = std::to_string(v + 1);
                                            return true;
                                          },
                                          50);
      ASSERT_TRUE(r.ok()) << r.status().message();
    }
  };
  std::thread a(writer), b(writer);
  a.join();
  b.join();
  ApiResult<Json> cm = c->Get(resources::kConfigMaps, "race", "counter");
  ASSERT_TRUE(cm.ok());
  EXPECT_EQ((*cm)["data"]["value"], std::to_string(2 * kPerWriter));  // no lost update
  std::printf("conflict retries: %d mutations for %d writes\n", mutations.load(), 2 * kPerWriter);
}

TEST(KubeClientIntegration, RbacRefusalIsAClearForbiddenError) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> admin = cp->AdminClient();
  CreateNamespace(*admin, "rbac");
  Result<ClientConfig> sa = cp->ServiceAccountConfig("rbac", "nobody");
  ASSERT_TRUE(sa.ok()) << sa.error();
  auto c = Client::FromConfig(*sa);
  ASSERT_TRUE(c.ok());
  ApiResult<ObjectList> pods = (*c)->List(resources::kPods, "rbac");
  ASSERT_FALSE(pods.ok());
  EXPECT_TRUE(pods.error().IsForbidden());
  EXPECT_EQ(pods.error().reason, "Forbidden");
  EXPECT_NE(pods.error().message.find("system:serviceaccount:rbac:nobody"), std::string::npos)
      << pods.error().message;
  EXPECT_NE(pods.error().message.find("cannot list resource \"pods\""), std::string::npos);

  // Granting the verb makes the same call work: the refusal was RBAC, not the client.
  ASSERT_TRUE(cp->Kubectl({"create", "role", "pod-reader", "-n", "rbac", "--verb=list",
                           "--resource=pods"}).ok());
  ASSERT_TRUE(cp->Kubectl({"create", "rolebinding", "pod-reader", "-n", "rbac",
                           "--role=pod-reader", "--serviceaccount=rbac:nobody"}).ok());
  ApiResult<ObjectList> allowed = ApiError{0, "NotTried", ""};
  for (int i = 0; i < 50; ++i) {  // RBAC caches take a moment to see the binding
    allowed = (*c)->List(resources::kPods, "rbac");
    if (allowed.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_TRUE(allowed.ok()) << allowed.status().message();
}

TEST(KubeClientIntegration, TokenFileIsReReadWhenRotated) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> admin = cp->AdminClient();
  CreateNamespace(*admin, "rotation");
  Result<ClientConfig> sa = cp->ServiceAccountConfig("rotation", "rotating");
  ASSERT_TRUE(sa.ok()) << sa.error();
  ASSERT_TRUE(cp->Kubectl({"create", "clusterrolebinding", "rotating-discovery",
                           "--clusterrole=system:discovery",
                           "--serviceaccount=rotation:rotating"}).ok());
  // As in a pod: the token lives in a file the kubelet replaces.
  const std::string token_file = cp->dir() + "/rotating-token";
  auto write_token = [&](const std::string& t) {
    const std::string tmp = token_file + ".tmp";
    std::ofstream(tmp) << t << "\n";
    std::filesystem::rename(tmp, token_file);  // atomic, like the kubelet's symlink swap
  };
  write_token(sa->token);
  ClientConfig from_file = *sa;
  from_file.token.clear();
  from_file.token_file = token_file;
  auto c = Client::FromConfig(from_file);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE((*c)->GetRaw("/version").ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // a new modification time
  write_token("not-a-token");
  ApiResult<std::string> rejected = (*c)->GetRaw("/version");
  ASSERT_FALSE(rejected.ok());
  EXPECT_EQ(rejected.error().code, 401);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  write_token(sa->token);
  EXPECT_TRUE((*c)->GetRaw("/version").ok());
}

TEST(KubeClientIntegration, EventsAreRecordedAgainstTheirObject) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> c = cp->AdminClient();
  CreateNamespace(*c, "events");
  ApiResult<Json> cm = c->Create(resources::kConfigMaps, "events", ConfigMap("events", "subject", "0"));
  ASSERT_TRUE(cm.ok());
  Json regarding = *cm;
  regarding["apiVersion"] = "v1";
  regarding["kind"] = "ConfigMap";
  EventRecorder recorder(c, "graintune.dev/operator", "test-instance");
  Status s = recorder.Record(regarding, {.type = "Normal", .reason = "RecommendationChanged",
                                         .action = "Recommend", .note = "4 -> 9 workers"});
  ASSERT_TRUE(s.ok()) << s.message();
  ApiResult<ObjectList> events = c->List(resources::kEvents, "events");
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->items.size(), 1u);
  EXPECT_EQ(events->items[0]["reason"], "RecommendationChanged");
  EXPECT_EQ(events->items[0]["regarding"]["name"], "subject");
  EXPECT_EQ(events->items[0]["regarding"]["uid"], (*cm)["metadata"]["uid"]);
  EXPECT_FALSE(recorder.Record({{"metadata", Json::object()}}, {.reason = "X"}).ok());
}

std::string HolderOf(Client& c, const std::string& ns, const std::string& lease) {
  ApiResult<Json> l = c.Get(resources::kLeases, ns, lease);
  return l.ok() ? l->value("spec", Json::object()).value("holderIdentity", "") : "";
}

// Waits up to `limit` for the Lease holder to become `want`; the time it took, or -1.
double SecondsUntilHolder(Client& c, const std::string& ns, const std::string& lease,
                          const std::string& want, std::chrono::seconds limit) {
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - start < limit) {
    if (HolderOf(c, ns, lease) == want)
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

TEST(KubeClientIntegration, LeaderElectionHandsOverWithinTwoLeaseDurations) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  std::shared_ptr<Client> c = cp->AdminClient();
  CreateNamespace(*c, "election");
  const std::string bin = GRAINTUNE_LEASE_CANDIDATE;
  auto a = testing::ChildProcess::Spawn({bin, cp->kubeconfig_path(), "election", "op", "a"},
                                        cp->dir() + "/candidate-a.log");
  ASSERT_TRUE(a.ok()) << a.error();
  ASSERT_GE(SecondsUntilHolder(*c, "election", "op", "a", std::chrono::seconds(20)), 0)
      << testing::TailOfFile(a->log_path());
  auto b = testing::ChildProcess::Spawn({bin, cp->kubeconfig_path(), "election", "op", "b"},
                                        cp->dir() + "/candidate-b.log");
  ASSERT_TRUE(b.ok());
  std::this_thread::sleep_for(std::chrono::seconds(3));
  EXPECT_EQ(HolderOf(*c, "election", "op"), "a");  // b waits while a renews

  a.value().Kill();  // a crash: no release, b must wait the lease out
  constexpr double kLeaseDuration = 4;
  const double took = SecondsUntilHolder(*c, "election", "op", "b", std::chrono::seconds(20));
  std::printf("handover after SIGKILL of the leader: %.1f s (lease duration %.0f s)\n", took,
              kLeaseDuration);
  ASSERT_GE(took, 0) << testing::TailOfFile(b->log_path());
  EXPECT_LE(took, 2 * kLeaseDuration);

  // A graceful stop releases the Lease at once. The Lease can name b a moment before b has read
  // the answer to its write; stop it once it knows it leads.
  for (int i = 0; i < 50 && testing::TailOfFile(b->log_path()).find("leading b") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  b.value().Stop();
  EXPECT_EQ(HolderOf(*c, "election", "op"), "");
  EXPECT_NE(testing::TailOfFile(b->log_path()).find("stopped b"), std::string::npos);
}

}  // namespace
}  // namespace graintune::kube
