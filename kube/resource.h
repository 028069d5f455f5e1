// Which API resource a request is about, and the URL paths the API server serves it under.
// Plain values: the well-known types graintune uses are listed here, others can be built.
#pragma once

#include <string>

namespace graintune::kube {

struct ResourceType {
  std::string group;    // "" for the core group
  std::string version;  // v1, v1alpha1, ...
  std::string plural;   // nodes, jobsets, graintunings
  std::string kind;     // Node, JobSet, GrainTuning
  bool namespaced = true;

  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
};

// /api/v1/namespaces/NS/pods, /apis/batch/v1/jobs (all namespaces when ns is empty).
std::string CollectionPath(const ResourceType& type, const std::string& ns);
// CollectionPath + /NAME [+ /SUBRESOURCE].
std::string ObjectPath(const ResourceType& type, const std::string& ns, const std::string& name,
                       const std::string& subresource = "");
// Percent-encodes a query value (label selectors hold '=', ',', '!' and spaces).
std::string EncodeQueryValue(const std::string& value);

namespace resources {
extern const ResourceType kNamespaces;
extern const ResourceType kNodes;
extern const ResourceType kPods;
extern const ResourceType kConfigMaps;
extern const ResourceType kSecrets;
extern const ResourceType kServiceAccounts;
extern const ResourceType kJobs;
extern const ResourceType kJobSets;
extern const ResourceType kLeases;
extern const ResourceType kEvents;
extern const ResourceType kMutatingWebhookConfigurations;
extern const ResourceType kCustomResourceDefinitions;
extern const ResourceType kGrainTunings;
extern const ResourceType kGrainTunePolicies;
}  // namespace resources

}  // namespace graintune::kube
