// The Helm chart against the real API server: lint, server-side dry run of the rendered
// manifests, install, least-privilege RBAC (kubectl auth can-i as each service account),
// upgrade keeping GrainTunings, uninstall leaving nothing behind; and every value
// values.schema.json accepts changes what the chart renders (or is listed, with the reason,
// among the few that by design render nothing).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "kube/config.h"
#include "workload/workload_annotations.h"
#include "tests/controlplane/shared_control_plane.h"

namespace graintune::testing {
namespace {

class HelmChart : public ::testing::Test {
 protected:
  static std::string Chart() { return std::string(GRAINTUNE_SOURCE_DIR) + "/charts/graintune"; }
};

TEST_F(HelmChart, LintsAndRendersManifestsTheApiServerAccepts) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  Result<std::string> lint = cp->Helm({"lint", Chart()});
  ASSERT_TRUE(lint.ok()) << lint.error();
  EXPECT_NE(lint->find("0 chart(s) failed"), std::string::npos);
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{}, {"--set", "certificates.mode=certManager"},
        {"--set", "localDev.enabled=true", "--set", "localDev.webhookURL=https://127.0.0.1:9443"},
        {"--set", "webhook.networkPolicy.enabled=true", "--set",
         "webhook.networkPolicy.controlPlaneCIDRs={172.16.0.0/28}", "--set",
         "webhook.networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team=monitoring"}}) {
    std::vector<std::string> args = {"template", "gt", Chart(), "-n", "graintune-system"};
    args.insert(args.end(), extra.begin(), extra.end());
    Result<std::string> rendered = cp->Helm(args);
    ASSERT_TRUE(rendered.ok()) << rendered.error();
    cp->Kubectl({"create", "namespace", "graintune-system"});
    std::string manifests = *rendered;
    if (!extra.empty() && extra[1] == "certificates.mode=certManager") {
      // No cert-manager CRDs here: check everything else.
      EXPECT_NE(manifests.find("kind: Certificate"), std::string::npos);
      continue;
    }
    Result<std::string> dry = cp->Kubectl({"apply", "--dry-run=server", "-f", "-"}, manifests);
    EXPECT_TRUE(dry.ok()) << dry.error();
  }
  // Pod Security "restricted": the namespace enforces it and the API server reports no violation.
  cp->Kubectl({"label", "namespace", "graintune-system", "--overwrite",
               "pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/warn=restricted"});
  Result<std::string> restricted = cp->Helm({"template", "gt", Chart(), "-n", "graintune-system"});
  ASSERT_TRUE(restricted.ok());
  Result<std::string> psa = cp->Kubectl({"apply", "--dry-run=server", "-f", "-"}, *restricted);
  ASSERT_TRUE(psa.ok()) << psa.error();
  EXPECT_EQ(psa->find("violate PodSecurity"), std::string::npos) << *psa;
  // Optional monitors render when enabled.
  Result<std::string> monitors = cp->Helm({"template", "gt", Chart(), "--set", "metrics.serviceMonitor.enabled=true",
                                            "--set", "metrics.podMonitoring.enabled=true",
                                            "--set", "metrics.prometheusRule.enabled=true",
                                            "--set", "metrics.rules.enabled=true"});
  ASSERT_TRUE(monitors.ok()) << monitors.error();
  EXPECT_NE(monitors->find("kind: ServiceMonitor"), std::string::npos);
  EXPECT_NE(monitors->find("kind: PodMonitoring"), std::string::npos);
  EXPECT_NE(monitors->find("kind: PodMonitoring\nmetadata:\n  name: gt-webhook\n"), std::string::npos)
      << "the webhook serves its metrics on its probe port and needs its own PodMonitoring";
  // The alert rules themselves are tested in alert_rules_test.cc.
  EXPECT_NE(monitors->find("kind: PrometheusRule"), std::string::npos);
  EXPECT_NE(monitors->find("kind: Rules"), std::string::npos);
  // The webhook gets glibc's larger per-thread cache unless the value is emptied.
  Result<std::string> tuned = cp->Helm({"template", "gt", Chart(), "-s", "templates/webhook.yaml"});
  ASSERT_TRUE(tuned.ok()) << tuned.error();
  EXPECT_NE(tuned->find("{name: GLIBC_TUNABLES, value: \"glibc.malloc.tcache_count=256\"}"), std::string::npos)
      << *tuned;
  Result<std::string> plain = cp->Helm({"template", "gt", Chart(), "-s", "templates/webhook.yaml",
                                         "--set", "webhook.glibcTunables="});
  ASSERT_TRUE(plain.ok()) << plain.error();
  EXPECT_EQ(plain->find("GLIBC_TUNABLES"), std::string::npos);
  // The webhook's limits and shutdown reach its flags; probes use the probe port; the kubelet
  // waits for the shutdown delay and drain.
  Result<std::string> limits = cp->Helm({"template", "gt", Chart(), "-s", "templates/webhook.yaml",
                                          "--set", "webhook.limits.maxSites=7", "--set",
                                          "webhook.limits.maxConnections=99", "--set",
                                          "webhook.shutdown.delaySeconds=2"});
  ASSERT_TRUE(limits.ok()) << limits.error();
  for (const char* arg : {"- --max-sites=7\n", "- --max-connections=99\n", "- --shutdown-delay=2s\n",
                          "- --shutdown-grace=20s\n", "- --max-json-values=100000\n",
                          "- --max-inflight-body-mib=32\n", "- --header-timeout=5s\n",
                          "- --max-idle-per-source=128\n",
                          // Idle connections outlive the API server's (90 s): closing first
                          // races its next request into a failed-open admission.
                          "- --read-timeout=30s\n", "- --idle-timeout=120s\n",
                          "- --max-request-ms=1000\n", "httpGet: {path: /healthz, port: http-metrics}",
                          "terminationGracePeriodSeconds: 27\n"})
    EXPECT_NE(limits->find(arg), std::string::npos) << arg << " not in\n" << *limits;
  // The NetworkPolicy: absent by default, and an error without the control plane's ranges.
  Result<std::string> defaults = cp->Helm({"template", "gt", Chart()});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->find("kind: NetworkPolicy"), std::string::npos);
  Result<std::string> no_ranges =
      cp->Helm({"template", "gt", Chart(), "--set", "webhook.networkPolicy.enabled=true"});
  ASSERT_FALSE(no_ranges.ok());
  EXPECT_NE(no_ranges.error().find("controlPlaneCIDRs"), std::string::npos) << no_ranges.error();
  Result<std::string> policy = cp->Helm({"template", "gt", Chart(), "-s", "templates/networkpolicy.yaml",
                                          "--set", "webhook.networkPolicy.enabled=true", "--set",
                                          "webhook.networkPolicy.controlPlaneCIDRs={172.16.0.0/28,10.0.0.2/32}"});
  ASSERT_TRUE(policy.ok()) << policy.error();
  EXPECT_NE(policy->find("- ipBlock: {cidr: \"172.16.0.0/28\"}\n        - ipBlock: {cidr: \"10.0.0.2/32\"}\n"
                         "      ports:\n        - {protocol: TCP, port: 8443}"),
            std::string::npos) << *policy;
  // Values the schema accepts are rendered, never ignored: extra namespace match expressions
  // join graintune's own, ServiceMonitor labels reach the monitor, and a single webhook replica
  // gets no PodDisruptionBudget (minAvailable 1 would block every node drain).
  Result<std::string> selector = cp->Helm(
      {"template", "gt", Chart(), "-s", "templates/mutatingwebhookconfiguration.yaml", "--set",
       "webhook.namespaceSelector.matchExpressions[0].key=team", "--set",
       "webhook.namespaceSelector.matchExpressions[0].operator=Exists"});
  ASSERT_TRUE(selector.ok()) << selector.error();
  EXPECT_NE(selector->find("values: [kube-system, default]\n        - key: team\n          operator: Exists\n"),
            std::string::npos) << *selector;
  Result<std::string> labelled = cp->Helm({"template", "gt", Chart(), "-s", "templates/monitoring.yaml",
                                            "--set", "metrics.serviceMonitor.enabled=true", "--set",
                                            "metrics.serviceMonitor.labels.release=prometheus"});
  ASSERT_TRUE(labelled.ok()) << labelled.error();
  EXPECT_NE(labelled->find("    release: prometheus\nspec:"), std::string::npos) << *labelled;
  Result<std::string> one = cp->Helm({"template", "gt", Chart(), "--set", "webhook.replicas=1"});
  ASSERT_TRUE(one.ok()) << one.error();
  EXPECT_EQ(one->find("kind: PodDisruptionBudget"), std::string::npos);
  EXPECT_NE(defaults->find("kind: PodDisruptionBudget"), std::string::npos);  // 2 replicas
  // Pod labels, annotations and the PriorityClass reach both Deployments' pods.
  for (const char* component : {"webhook", "operator"}) {
    const std::string c = component;
    Result<std::string> pods = cp->Helm(
        {"template", "gt", Chart(), "-s", "templates/" + c + ".yaml", "--set",
         c + ".priorityClassName=system-cluster-critical", "--set", c + ".podLabels.team=ml", "--set",
         c + ".podAnnotations.owner=platform"});
    ASSERT_TRUE(pods.ok()) << pods.error();
    EXPECT_NE(pods->find("        app.kubernetes.io/component: " + c + "\n        team: ml\n"
                         "      annotations:\n        owner: platform\n"),
              std::string::npos) << *pods;
    EXPECT_NE(pods->find("      priorityClassName: system-cluster-critical\n"), std::string::npos) << *pods;
  }
  // Values are validated by values.schema.json.
  Result<std::string> bad = cp->Helm({"template", "gt", Chart(), "--set", "defaultPolicy.mode=Sometimes"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().find("mode"), std::string::npos) << bad.error();
  // A misspelt selector field is refused, not silently dropped.
  Result<std::string> typo = cp->Helm({"template", "gt", Chart(), "--set",
                                        "webhook.namespaceSelector.matchExpresions[0].key=team"});
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.error().find("matchExpresions"), std::string::npos) << typo.error();
}

// The chart states the oldest Kubernetes it works on (native sidecars: 1.29) and GKE's version
// strings match it; `helm template` without a cluster assumes a current version.
TEST_F(HelmChart, StatesItsMinimumKubernetesVersion) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  for (const char* version : {"", "v1.29.0", "v1.30.5-gke.1014001", "v1.36.3"}) {
    std::vector<std::string> args = {"template", "gt", Chart()};
    if (*version) args.insert(args.end(), {"--kube-version", version});
    Result<std::string> rendered = cp->Helm(args);
    EXPECT_TRUE(rendered.ok()) << version << ": " << rendered.error();
  }
  Result<std::string> old = cp->Helm({"template", "gt", Chart(), "--kube-version", "v1.28.15-gke.1"});
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.error().find("incompatible with Kubernetes v1.28.15"), std::string::npos) << old.error();
}

TEST_F(HelmChart, ImageNamesArgsCrdsAndExporterScrapingReachTheManifests) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  const std::string digest = "sha256:" + std::string(64, 'e');
  // A digest pins both binaries' image, and the exporter sidecar's unless it has its own.
  Result<std::string> pinned = cp->Helm({"template", "gt", Chart(), "-n", "graintune-system",
                                         "--set", "image.digest=" + digest});
  ASSERT_TRUE(pinned.ok()) << pinned.error();
  const std::string by_digest = "ghcr.io/graintune/graintune@" + digest;
  EXPECT_NE(pinned->find("image: " + by_digest + "\n          imagePullPolicy: IfNotPresent\n"
                         "          command: [/usr/local/bin/graintune-operator]"),
            std::string::npos) << *pinned;
  EXPECT_NE(pinned->find("- --exporter-image\n            - " + by_digest + "\n"), std::string::npos);
  EXPECT_EQ(pinned->find("graintune:0.1.0"), std::string::npos) << "a tag left beside the digest";
  Result<std::string> exporter = cp->Helm({"template", "gt", Chart(), "-s", "templates/webhook.yaml",
                                           "--set", "image.digest=" + digest, "--set",
                                           "webhook.exporter.image.repository=registry.example/exporter"});
  ASSERT_TRUE(exporter.ok()) << exporter.error();
  EXPECT_NE(exporter->find("- --exporter-image\n            - registry.example/exporter:0.1.0\n"),
            std::string::npos) << *exporter;
  EXPECT_NE(exporter->find("image: " + by_digest + "\n"), std::string::npos);

  // fullnameOverride renames every object, and the names the webhook is told (its Secret, its
  // webhook configuration) stay those its RBAC grants.
  Result<std::string> renamed = cp->Helm({"template", "gt", Chart(), "-n", "graintune-system", "--set",
                                          "fullnameOverride=tuner", "--set", "nameOverride=tuner-app"});
  ASSERT_TRUE(renamed.ok()) << renamed.error();
  for (const char* text : {"- graintune-system/tuner-webhook-tls\n", "resourceNames: [tuner-webhook-tls]",
                           "- --webhook-configuration\n            - tuner-graintune-system\n",
                           "resourceNames: [tuner-graintune-system]", "name: tuner-cluster-default\n",
                           "- --lease-name\n            - tuner-operator\n",
                           "resourceNames: [tuner-operator]", "app.kubernetes.io/name: tuner-app\n"})
    EXPECT_NE(renamed->find(text), std::string::npos) << text << " not in\n" << *renamed;
  EXPECT_EQ(renamed->find("gt-"), std::string::npos) << "a name still from the release";

  // Extra excluded namespaces: the API server does not call for them, the webhook skips them;
  // extra args come after the chart's own flags.
  Result<std::string> excluded = cp->Helm(
      {"template", "gt", Chart(), "-n", "graintune-system", "--set",
       "webhook.excludeNamespaces={scratch,ci}", "--set", "webhook.extraArgs={--threads=4}", "--set",
       "operator.extraArgs={--scrape-timeout-ms=5000}"});
  ASSERT_TRUE(excluded.ok()) << excluded.error();
  for (const char* text : {"values: [kube-system, graintune-system, scratch, ci]\n",
                           "- --exclude-namespace\n            - \"scratch\"\n"
                           "            - --exclude-namespace\n            - \"ci\"\n"})
    EXPECT_NE(excluded->find(text), std::string::npos) << text << " not in\n" << *excluded;
  // (and the shared process namespace, on by default, before them).
  EXPECT_NE(excluded->find("- --exporter-memory-limit=64Mi\n            - --share-process-namespace\n"
                           "            - \"--threads=4\"\n          env:"),
            std::string::npos)
      << *excluded;
  // The exporter sidecar's resources reach the webhook as its flags.
  for (const char* flag : {"- --exporter-cpu-request=10m\n", "- --exporter-memory-request=32Mi\n",
                           "- --exporter-memory-limit=64Mi\n"})
    EXPECT_NE(excluded->find(flag), std::string::npos) << flag;
  EXPECT_NE(excluded->find("\"--scrape-timeout-ms=5000\"\n          env:"), std::string::npos) << *excluded;
  Result<std::string> not_a_flag =
      cp->Helm({"template", "gt", Chart(), "--set", "webhook.extraArgs={threads}"});
  EXPECT_FALSE(not_a_flag.ok()) << "extraArgs take --flag or --flag=value";

  // The CRDs come from the crds subchart (Helm installs them before any template, so the default
  // GrainTunePolicy can be created in the same install); crds.enabled=false leaves them out.
  Result<std::string> with_crds = cp->Helm({"template", "gt", Chart(), "--include-crds"});
  ASSERT_TRUE(with_crds.ok()) << with_crds.error();
  EXPECT_NE(with_crds->find("  name: graintunings.graintune.dev\n"), std::string::npos);
  EXPECT_NE(with_crds->find("  name: graintunepolicies.graintune.dev\n"), std::string::npos);
  Result<std::string> without_crds =
      cp->Helm({"template", "gt", Chart(), "--include-crds", "--set", "crds.enabled=false"});
  ASSERT_TRUE(without_crds.ok()) << without_crds.error();
  EXPECT_EQ(without_crds->find("kind: CustomResourceDefinition"), std::string::npos);
  EXPECT_NE(without_crds->find("kind: GrainTunePolicy"), std::string::npos);

  // The exporters of tuned pods, in every namespace, are scraped when a monitor switch is on: by
  // the label the webhook puts on tuned pods and the port name of the sidecar it injects
  // (webhook/exporter_injection.cc); the PodMonitor adds the pod_uid operator.prometheusURL needs.
  Result<std::string> scraped = cp->Helm(
      {"template", "gt", Chart(), "-n", "graintune-system", "-s", "templates/monitoring-exporters.yaml",
       "--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.podMonitoring.enabled=true",
       "--set", "metrics.serviceMonitor.labels.release=prometheus"});
  ASSERT_TRUE(scraped.ok()) << scraped.error();
  const std::string selector = std::string("matchLabels: {") + workload::kManagedLabel + ": \"true\"}";
  EXPECT_NE(scraped->find("kind: PodMonitor\nmetadata:\n  name: gt-exporters\n  namespace: graintune-system\n"),
            std::string::npos) << *scraped;
  EXPECT_NE(scraped->find("    release: prometheus\nspec:\n  namespaceSelector: {any: true}\n  selector:\n    " +
                          selector + "\n  podMetricsEndpoints:\n    - port: gt-metrics\n      interval: 30s\n"
                          "      relabelings:\n        - {sourceLabels: [__meta_kubernetes_pod_uid], "
                          "targetLabel: pod_uid}\n"),
            std::string::npos) << *scraped;
  EXPECT_NE(scraped->find("kind: ClusterPodMonitoring\nmetadata:\n  name: gt-graintune-system-exporters\n"),
            std::string::npos) << *scraped;
  EXPECT_NE(scraped->find("    " + selector + "\n  endpoints:\n    - {port: gt-metrics, interval: 30s}\n"),
            std::string::npos) << *scraped;
  Result<std::string> no_exporter = cp->Helm(
      {"template", "gt", Chart(), "--set", "metrics.serviceMonitor.enabled=true", "--set",
       "metrics.podMonitoring.enabled=true", "--set", "webhook.exporter.enabled=false"});
  ASSERT_TRUE(no_exporter.ok()) << no_exporter.error();
  EXPECT_EQ(no_exporter->find("gt-metrics"), std::string::npos) << "nothing to scrape without exporters";
}

// Every leaf of values.schema.json (a property with no properties of its own) with a value that
// differs from the default, and the settings it needs in order to matter. A value added to the
// schema without a case here fails the test below; so does one the templates ignore.
struct ValueCase {
  const char* path;                      // dotted, as in the schema
  const char* json;                      // given as --set-json path=json
  std::vector<const char*> context = {};  // path=json settings, in both renders
};

const ValueCase kValueCases[] = {
    {"nameOverride", R"("tuner")"},
    {"fullnameOverride", R"("tuner")"},
    {"image.repository", R"("registry.example/graintune")"},
    {"image.tag", R"("9.9.9")"},
    {"image.digest", R"("sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")"},
    {"image.pullPolicy", R"("Always")"},
    {"imagePullSecrets", R"([{"name": "regcred"}])"},
    {"crds.enabled", "false"},
    {"webhook.logLevel", R"("debug")"},
    {"webhook.replicas", "3"},
    {"webhook.port", "9443"},
    {"webhook.timeoutSeconds", "7"},
    {"webhook.namespaceSelector.matchLabels", R"({"tuned": "yes"})"},
    {"webhook.namespaceSelector.matchExpressions", R"([{"key": "team", "operator": "Exists"}])"},
    {"webhook.objectSelector", R"({"matchLabels": {"tuned": "yes"}})"},
    {"webhook.excludeNamespaces", R"(["scratch"])"},
    {"webhook.resources.requests", R"({"cpu": "300m"})"},
    {"webhook.resources.limits", R"({"memory": "300Mi"})"},
    {"webhook.glibcTunables", R"("glibc.malloc.tcache_count=64")"},
    {"webhook.exporter.enabled", "false"},
    {"webhook.exporter.port", "9555"},
    {"webhook.exporter.shareProcessNamespace", "false"},
    {"webhook.exporter.image.repository", R"("registry.example/exporter")"},
    {"webhook.exporter.image.tag", R"("7.7.7")"},
    {"webhook.exporter.resources.requests.cpu", R"("25m")"},
    {"webhook.exporter.resources.requests.memory", R"("48Mi")"},
    {"webhook.exporter.resources.limits.memory", R"("96Mi")"},
    {"webhook.exporter.image.digest", R"("sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb")"},
    {"webhook.podDisruptionBudget.minAvailable", R"("50%")"},
    {"webhook.probePort", "9081"},
    {"webhook.limits.maxConnections", "99"},
    {"webhook.limits.maxIdleConnectionsPerSource", "9"},
    {"webhook.limits.maxInflightBodyMiB", "64"},
    {"webhook.limits.headerTimeoutSeconds", "11"},
    {"webhook.limits.readTimeoutSeconds", "31"},
    {"webhook.limits.idleTimeoutSeconds", "12"},
    {"webhook.limits.maxJsonValues", "200000"},
    {"webhook.limits.maxSites", "7"},
    {"webhook.limits.maxRequestMilliseconds", "900"},
    {"webhook.shutdown.delaySeconds", "2"},
    {"webhook.shutdown.graceSeconds", "9"},
    {"webhook.networkPolicy.enabled", "true", {R"(webhook.networkPolicy.controlPlaneCIDRs=["172.16.0.0/28"])"}},
    {"webhook.networkPolicy.controlPlaneCIDRs", R"(["10.1.0.0/28"])",
     {"webhook.networkPolicy.enabled=true", R"(webhook.networkPolicy.controlPlaneCIDRs=["172.16.0.0/28"])"}},
    {"webhook.networkPolicy.metricsFrom", R"([{"namespaceSelector": {"matchLabels": {"team": "monitoring"}}}])",
     {"webhook.networkPolicy.enabled=true", R"(webhook.networkPolicy.controlPlaneCIDRs=["172.16.0.0/28"])"}},
    {"webhook.podLabels", R"({"team": "ml"})"},
    {"webhook.podAnnotations", R"({"owner": "platform"})"},
    {"webhook.priorityClassName", R"("system-cluster-critical")"},
    {"webhook.nodeSelector", R"({"pool": "system"})"},
    {"webhook.tolerations", R"([{"key": "dedicated", "operator": "Exists"}])"},
    {"webhook.affinity", R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["system"]}]}]}}})"},
    {"webhook.extraArgs", R"(["--threads=4"])"},
    {"webhook.hostNetwork", "true"},
    {"webhook.dnsPolicy", R"("Default")"},
    {"webhook.extraEnv", R"([{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}])"},
    {"operator.logLevel", R"("debug")"},
    {"operator.replicas", "3"},
    {"operator.resyncPeriodMs", "7000"},
    {"operator.statusProgressIntervalMs", "45000"},
    {"operator.prometheusURL", R"("http://prometheus.monitoring:9090")"},
    {"operator.forgetAfter", R"("30d")"},
    {"operator.resources.requests", R"({"cpu": "300m"})"},
    {"operator.resources.limits", R"({"memory": "300Mi"})"},
    {"operator.podLabels", R"({"team": "ml"})"},
    {"operator.podAnnotations", R"({"owner": "platform"})"},
    {"operator.priorityClassName", R"("system-cluster-critical")"},
    {"operator.nodeSelector", R"({"pool": "system"})"},
    {"operator.tolerations", R"([{"key": "dedicated", "operator": "Exists"}])"},
    {"operator.affinity", R"({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["system"]}]}]}}})"},
    {"operator.extraArgs", R"(["--scrape-timeout-ms=5000"])"},
    {"operator.probePort", "9082"},
    {"operator.hostNetwork", "true"},
    {"operator.dnsPolicy", R"("Default")"},
    {"operator.extraEnv", R"([{"name": "HTTPS_PROXY", "value": "http://proxy:3128"}])"},
    {"certificates.mode", R"("certManager")"},
    {"certificates.certManager.issuerRef", R"({"name": "corp-ca", "kind": "ClusterIssuer"})",
     {R"(certificates.mode="certManager")"}},
    {"defaultPolicy.enabled", "false"},
    {"defaultPolicy.mode", R"("Off")"},
    {"defaultPolicy.minWorkers", "2"},
    {"defaultPolicy.maxWorkers", "32"},
    {"defaultPolicy.safetyFactor", "1.5"},
    {"defaultPolicy.memoryHeadroom", "0.2"},
    {"defaultPolicy.objective", R"("FewestWorkers")"},
    {"defaultPolicy.tuneUnset", "true"},
    {"defaultPolicy.startCheck", "false"},
    {"metrics.serviceMonitor.enabled", "true"},
    {"metrics.serviceMonitor.interval", R"("15s")", {"metrics.serviceMonitor.enabled=true"}},
    {"metrics.serviceMonitor.labels", R"({"release": "prometheus"})", {"metrics.serviceMonitor.enabled=true"}},
    {"metrics.podMonitoring.enabled", "true"},
    {"metrics.podMonitoring.interval", R"("15s")", {"metrics.podMonitoring.enabled=true"}},
    {"metrics.prometheusRule.enabled", "true"},
    {"metrics.prometheusRule.labels", R"({"release": "prometheus"})", {"metrics.prometheusRule.enabled=true"}},
    {"metrics.rules.enabled", "true"},
    {"metrics.dashboard.enabled", "true"},
    {"metrics.dashboard.namespace", R"("monitoring")", {"metrics.dashboard.enabled=true"}},
    {"metrics.dashboard.labels", R"({"grafana_dashboard": "tpu"})", {"metrics.dashboard.enabled=true"}},
    {"metrics.dashboard.annotations", R"({"grafana_folder": "TPU"})", {"metrics.dashboard.enabled=true"}},
    {"localDev.enabled", "true", {R"(localDev.webhookURL="https://127.0.0.1:9443")"}},
    {"localDev.webhookURL", R"("https://10.0.0.1:9443")",
     {"localDev.enabled=true", R"(localDev.webhookURL="https://127.0.0.1:9443")"}},
    {"localDev.caBundle", R"("Y2EK")", {"localDev.enabled=true", R"(localDev.webhookURL="https://127.0.0.1:9443")"}},
};

// Leaves that by design render nothing, with the reason. Keep this short.
const std::map<std::string, std::string> kRenderNothing = {
    {"global", "Helm's globals, shared with subcharts; graintune reads none"},
    {"crds.global", "Helm copies the globals into every subchart's values (here the crds subchart)"},
};

// Dotted paths of the schema's leaves, "$ref"s to its definitions followed. Also reports every
// object with properties that does not refuse unknown ones (typos would pass silently).
void CollectLeaves(const nlohmann::json& schema, const nlohmann::json& node, const std::string& path,
                   std::vector<std::string>& leaves, std::vector<std::string>& open_objects) {
  const nlohmann::json* n = &node;
  if (n->contains("$ref")) {
    const std::string ref = (*n)["$ref"].get<std::string>();  // "#/definitions/NAME"
    n = &schema.at(nlohmann::json::json_pointer(ref.substr(1)));
  }
  if (!n->contains("properties")) {
    leaves.push_back(path);
    return;
  }
  if (n->value("additionalProperties", nlohmann::json(true)) != false)
    open_objects.push_back(path.empty() ? "(top)" : path);
  for (const auto& [name, child] : (*n)["properties"].items())
    CollectLeaves(schema, child, path.empty() ? name : path + "." + name, leaves, open_objects);
}

TEST_F(HelmChart, EverySchemaValueChangesTheRenderedManifests) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  Result<std::string> text = kube::ReadFileText(Chart() + "/values.schema.json");
  ASSERT_TRUE(text.ok()) << text.error();
  const nlohmann::json schema = nlohmann::json::parse(*text);
  std::vector<std::string> leaves, open_objects;
  CollectLeaves(schema, schema, "", leaves, open_objects);
  ASSERT_GT(leaves.size(), 50u);
  EXPECT_TRUE(open_objects.empty()) << "objects in values.schema.json without additionalProperties: "
                                       "false, where a misspelt key passes: " << ::testing::PrintToString(open_objects);

  std::map<std::string, const ValueCase*> cases;
  for (const ValueCase& c : kValueCases) EXPECT_TRUE(cases.emplace(c.path, &c).second) << "twice: " << c.path;
  const std::set<std::string> leaf_set(leaves.begin(), leaves.end());
  for (const auto& [path, c] : cases)
    EXPECT_TRUE(leaf_set.count(path)) << path << " has a case but is not a leaf of values.schema.json";
  for (const auto& [path, reason] : kRenderNothing)
    EXPECT_TRUE(leaf_set.count(path)) << path << " is allowed to render nothing but is not in the schema";

  // Renders with the given --set-json settings (CRDs included, as crds.enabled acts on them).
  std::map<std::vector<std::string>, std::string> baselines;
  auto render = [&](const std::vector<std::string>& settings) -> Result<std::string> {
    std::vector<std::string> args = {"template", "gt", Chart(), "-n", "graintune-system", "--include-crds"};
    for (const std::string& s : settings) {
      args.push_back("--set-json");
      args.push_back(s);
    }
    return cp->Helm(args);
  };
  for (const std::string& leaf : leaves) {
    if (kRenderNothing.count(leaf)) continue;
    auto found = cases.find(leaf);
    if (found == cases.end()) {
      ADD_FAILURE() << "values.schema.json accepts " << leaf
                    << " but kValueCases has no case for it: render it in the chart and add one";
      continue;
    }
    const ValueCase& c = *found->second;
    const std::vector<std::string> context(c.context.begin(), c.context.end());
    if (!baselines.count(context)) {
      Result<std::string> base = render(context);
      if (!base.ok()) {
        ADD_FAILURE() << "the context of " << leaf << " was refused: " << base.error();
        continue;
      }
      baselines[context] = *base;
    }
    std::vector<std::string> settings = context;
    settings.push_back(std::string(c.path) + "=" + c.json);
    Result<std::string> changed = render(settings);
    if (!changed.ok()) {
      ADD_FAILURE() << leaf << "=" << c.json << " was refused: " << changed.error();
      continue;
    }
    EXPECT_TRUE(*changed != baselines[context])  // not EXPECT_NE: no need to print both renders
        << "values.schema.json accepts " << leaf << "=" << c.json << " but the chart renders the same";
  }
}

struct Access {
  const char* sa;
  const char* verb;
  const char* resource;
  const char* ns;  // "" = cluster scope
  bool allowed;
};

TEST_F(HelmChart, InstallGrantsExactlyTheVerbsTheCodeUsesAndUninstallLeavesNothing) {
  GRAINTUNE_USE_CONTROL_PLANE(cp, ControlPlaneKind::kApiServer);
  Result<std::string> install = cp->Helm({"install", "gt", Chart(), "-n", "graintune-system",
                                           "--create-namespace"});
  ASSERT_TRUE(install.ok()) << install.error();

  const Access checks[] = {
      // The webhook: caches, its own Secret and webhook configuration.
      {"gt-webhook", "list", "nodes", "", true},
      {"gt-webhook", "get", "configmaps", "team", true},
      {"gt-webhook", "list", "configmaps", "", false},  // read by name, never listed or watched
      {"gt-webhook", "watch", "configmaps", "", false},
      {"gt-webhook", "watch", "graintunings.graintune.dev", "", true},
      {"gt-webhook", "list", "graintunepolicies.graintune.dev", "", true},
      {"gt-webhook", "watch", "namespaces", "", true},
      {"gt-webhook", "watch", "jobs.batch", "", true},
      {"gt-webhook", "update", "jobs.batch", "default", false},
      {"gt-webhook", "create", "secrets", "graintune-system", true},
      {"gt-webhook", "get", "secrets/gt-webhook-tls", "graintune-system", true},
      {"gt-webhook", "update", "secrets/gt-webhook-tls", "graintune-system", true},
      {"gt-webhook", "patch", "mutatingwebhookconfigurations/gt-graintune-system", "", true},
      {"gt-webhook", "get", "secrets/other", "graintune-system", false},
      {"gt-webhook", "list", "secrets", "graintune-system", false},
      {"gt-webhook", "create", "pods", "default", false},
      {"gt-webhook", "update", "graintunings.graintune.dev", "default", false},
      {"gt-webhook", "patch", "mutatingwebhookconfigurations/someone-else", "", false},
      // The operator: tuned pods, GrainTunings and status, Events, its Lease.
      {"gt-operator", "watch", "pods", "", true},
      {"gt-operator", "get", "configmaps", "team", true},
      {"gt-operator", "list", "configmaps", "", false},
      {"gt-operator", "create", "graintunings.graintune.dev", "team", true},
      {"gt-operator", "update", "graintunings.graintune.dev/status", "team", true},
      {"gt-operator", "get", "jobsets.jobset.x-k8s.io", "team", true},
      {"gt-operator", "get", "jobs.batch", "team", true},
      {"gt-operator", "create", "events.events.k8s.io", "team", true},
      {"gt-operator", "create", "leases.coordination.k8s.io", "graintune-system", true},
      {"gt-operator", "update", "leases.coordination.k8s.io/gt-operator", "graintune-system", true},
      {"gt-operator", "delete", "pods", "team", false},
      {"gt-operator", "update", "jobsets.jobset.x-k8s.io", "team", false},
      {"gt-operator", "get", "secrets", "team", false},
      {"gt-operator", "update", "graintunings.graintune.dev", "team", false},
      {"gt-operator", "delete", "graintunings.graintune.dev", "team", false},  // only with forgetAfter
      {"gt-operator", "update", "leases.coordination.k8s.io/kube-scheduler", "kube-system", false},
  };
  for (const Access& a : checks) {
    std::string resource = a.resource;
    std::vector<std::string> args = {"auth", "can-i", a.verb};
    if (resource.size() > 7 && resource.substr(resource.size() - 7) == "/status") {
      args.push_back(resource.substr(0, resource.size() - 7));
      args.push_back("--subresource=status");
    } else {
      args.push_back(resource);
    }
    args.push_back(std::string("--as=system:serviceaccount:graintune-system:") + a.sa);
    if (*a.ns) {
      args.push_back("-n");
      args.push_back(a.ns);
    }
    Result<std::string> r = cp->Kubectl(args);
    // can-i exits 1 for "no"; its output says which.
    const std::string out = r.ok() ? *r : r.error();
    const bool yes = out.find("yes") != std::string::npos;
    EXPECT_EQ(yes, a.allowed) << a.sa << " " << a.verb << " " << a.resource << " in '" << a.ns
                              << "': " << out;
  }

  // Upgrade keeps what the operator learned.
  cp->Kubectl({"create", "namespace", "team"});
  ASSERT_TRUE(cp->Kubectl({"apply", "-f", "-"}, R"(
apiVersion: graintune.dev/v1alpha1
kind: GrainTuning
metadata: {name: kept, namespace: team}
spec: {tuningKey: kept}
)").ok());
  Result<std::string> upgrade = cp->Helm({"upgrade", "gt", Chart(), "-n", "graintune-system",
                                           "--set", "defaultPolicy.maxWorkers=32"});
  ASSERT_TRUE(upgrade.ok()) << upgrade.error();
  EXPECT_TRUE(cp->Kubectl({"get", "graintuning", "kept", "-n", "team"}).ok());
  Result<std::string> policy = cp->Kubectl({"get", "graintunepolicy", "gt-cluster-default",
                                            "-o", "jsonpath={.spec.maxWorkers}"});
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(*policy, "32");

  Result<std::string> uninstall = cp->Helm({"uninstall", "gt", "-n", "graintune-system", "--wait"});
  ASSERT_TRUE(uninstall.ok()) << uninstall.error();
  Result<std::string> left = cp->Kubectl(
      {"get", "deployments,services,serviceaccounts,roles,rolebindings,clusterroles,"
              "clusterrolebindings,mutatingwebhookconfigurations,poddisruptionbudgets,"
              "graintunepolicies",
       "-A", "-l", "app.kubernetes.io/instance=gt", "-o", "name"});
  ASSERT_TRUE(left.ok()) << left.error();
  EXPECT_EQ(*left, "") << "left behind by uninstall:\n" << *left;
  // CRDs (and so every GrainTuning) stay, as Helm does for crds/: learning survives reinstalls.
  EXPECT_TRUE(cp->Kubectl({"get", "graintuning", "kept", "-n", "team"}).ok());
}

}  // namespace
}  // namespace graintune::testing
