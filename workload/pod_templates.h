// Where the pod specs of a workload live, by kind, and where its pods may land.
//
// Pod: /spec. batch/v1 Job: /spec/template/spec. jobset.x-k8s.io JobSet: every
// /spec/replicatedJobs/N/template/spec/template/spec. Anything malformed (missing fields,
// wrong types) yields fewer templates, never an exception.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workload/sources.h"

namespace graintune::workload {

enum class WorkloadKind { kPod, kJob, kJobSet, kOther };
std::string ToString(WorkloadKind kind);
// From an AdmissionReview's kind (group/version/kind). kOther for anything else.
WorkloadKind KindOf(const std::string& group, const std::string& kind);
// The API group of an object's apiVersion: "batch" for "batch/v1", "" for core "v1".
std::string GroupOf(const std::string& api_version);

struct PodTemplateRef {
  std::string spec_pointer;      // JSON pointer of the PodSpec
  std::string metadata_pointer;  // JSON pointer of the pod (template) metadata
  std::string name;              // replicatedJob name for JobSets, else ""
};

std::vector<PodTemplateRef> LocatePodTemplates(const nlohmann::json& object, WorkloadKind kind);

NodeSelection NodeSelectionOf(const nlohmann::json& pod_spec);

// metadata.annotations / metadata.labels of `metadata` as a string map (non-strings skipped).
std::map<std::string, std::string> StringMap(const nlohmann::json& metadata, const char* field);

// One entry of metadata.annotations / metadata.labels when it is a string, without copying the
// map; nullptr otherwise. The pointer lives as long as `metadata`.
const std::string* StringEntry(const nlohmann::json& metadata, const char* field, const std::string& key);

// object[key] when it is a string, else "" (absent, or another type: a hostile or malformed
// object gets an answer, never nlohmann's type_error from value(key, "")).
std::string StringField(const nlohmann::json& object, const char* key);

// Escapes a key for use in a JSON pointer ("graintune.dev/reason" -> "graintune.dev~1reason").
std::string PointerToken(const std::string& key);

}  // namespace graintune::workload
