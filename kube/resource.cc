#include "kube/resource.h"

#include <cctype>
#include <cstdio>

namespace graintune::kube {

std::string CollectionPath(const ResourceType& type, const std::string& ns) {
  std::string path = type.group.empty() ? "/api/" + type.version
                                        : "/apis/" + type.group + "/" + type.version;
  if (type.namespaced && !ns.empty()) path += "/namespaces/" + ns;
  return path + "/" + type.plural;
}

std::string ObjectPath(const ResourceType& type, const std::string& ns, const std::string& name,
                       const std::string& subresource) {
  std::string path = CollectionPath(type, ns) + "/" + name;
  if (!subresource.empty()) path += "/" + subresource;
  return path;
}

std::string EncodeQueryValue(const std::string& value) {
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

namespace resources {
const ResourceType kNamespaces{"", "v1", "namespaces", "Namespace", false};
const ResourceType kNodes{"", "v1", "nodes", "Node", false};
const ResourceType kPods{"", "v1", "pods", "Pod", true};
const ResourceType kConfigMaps{"", "v1", "configmaps", "ConfigMap", true};
const ResourceType kSecrets{"", "v1", "secrets", "Secret", true};
const ResourceType kServiceAccounts{"", "v1", "serviceaccounts", "ServiceAccount", true};
const ResourceType kJobs{"batch", "v1", "jobs", "Job", true};
const ResourceType kJobSets{"jobset.x-k8s.io", "v1alpha2", "jobsets", "JobSet", true};
const ResourceType kLeases{"coordination.k8s.io", "v1", "leases", "Lease", true};
const ResourceType kEvents{"events.k8s.io", "v1", "events", "Event", true};
const ResourceType kMutatingWebhookConfigurations{"admissionregistration.k8s.io", "v1",
                                                  "mutatingwebhookconfigurations",
                                                  "MutatingWebhookConfiguration", false};
const ResourceType kCustomResourceDefinitions{"apiextensions.k8s.io", "v1",
                                              "customresourcedefinitions",
                                              "CustomResourceDefinition", false};
const ResourceType kGrainTunings{"graintune.dev", "v1alpha1", "graintunings", "GrainTuning", true};
const ResourceType kGrainTunePolicies{"graintune.dev", "v1alpha1", "graintunepolicies",
                                      "GrainTunePolicy", false};
}  // namespace resources

}  // namespace graintune::kube
