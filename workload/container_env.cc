#include "workload/container_env.h"

#include <map>

#include "workload/kubernetes_expansion.h"
#include "workload/pod_templates.h"

namespace graintune::workload {
namespace {

using json = nlohmann::json;

// The fieldRef xpk (and JobSet's own docs) use for JOBSET_NAME.
constexpr char kJobSetNameField[] = "metadata.annotations['jobset.sigs.k8s.io/jobset-name']";

// What $(NAME) expands to when NAME is `v` (null: not defined).
KubernetesVariable ReferenceTo(const EnvVariable* v, bool may_set_any) {
  if (!v) return may_set_any ? KubernetesVariable{KubernetesVariable::Kind::kUnknown, ""} : KubernetesVariable{};
  if (!v->value) return {KubernetesVariable::Kind::kUnknown, ""};
  return {KubernetesVariable::Kind::kKnown, *v->value};
}

class EnvBuilder {
 public:
  void Set(EnvVariable v) {
    auto it = out_.index.find(v.name);
    if (it != out_.index.end()) {
      out_.variables[it->second] = std::move(v);
      return;
    }
    if (out_.variables.size() >= kMaxEnvVariables) return MaySetAny("over 4096 variables");
    out_.index[v.name] = out_.variables.size();
    out_.variables.push_back(std::move(v));
  }
  // A $(NAME) reference as the kubelet resolves it from the variables set so far.
  KubernetesVariable Lookup(const std::string& name) const {
    return ReferenceTo(out_.Find(name), out_.may_set_any);
  }
  void MaySetAny(std::string why) {
    if (!out_.may_set_any) out_.may_set_any_why = std::move(why);
    out_.may_set_any = true;
  }
  ContainerEnv Take() { return std::move(out_); }

 private:
  ContainerEnv out_;
};

void AddEnvFrom(const json& from, const std::string& ns, ConfigMapSource* configmaps,
                EnvBuilder& env) {
  if (!from.is_object()) return;
  const std::string prefix = StringField(from, "prefix");
  auto ref = from.find("configMapRef");
  if (ref == from.end() || !ref->is_object()) {
    env.MaySetAny(from.contains("secretRef") ? "envFrom a Secret" : "an envFrom graintune cannot read");
    return;
  }
  const std::string name = StringField(*ref, "name");
  const std::string source = "ConfigMap " + ns + "/" + name;
  if (!configmaps) return env.MaySetAny("envFrom " + source);
  Result<std::optional<std::map<std::string, std::string>>> data = configmaps->Data(ns, name);
  if (!data.ok()) return env.MaySetAny("envFrom " + source + " (" + data.error() + ")");
  if (!*data) {
    // Optional and absent: nothing; required and absent: the pod does not start.
    return;
  }
  for (const auto& [key, value] : **data) env.Set({prefix + key, value, "", source});
}

// One env[i] entry's value.
void AddEnv(const json& var, size_t i, const std::string& ns, ConfigMapSource* configmaps,
            const std::string& jobset_name, EnvBuilder& env) {
  if (!var.is_object()) return;
  const std::string name = StringField(var, "name");
  if (name.empty()) return;
  if (auto v = var.find("value"); v != var.end() && v->is_string()) {
    // The kubelet expands $(VAR) in env values from the variables defined before this one.
    const KubernetesExpanded e = ExpandKubernetesReferences(
        v->get<std::string>(), [&](const std::string& ref) { return env.Lookup(ref); });
    if (!e.unknown_reference.empty()) return env.Set({name, std::nullopt, "", "env (" + e.unknown_reference + ")"});
    // A value built from other variables cannot be rewritten where it was written.
    return env.Set({name, e.text, e.changed ? "" : "/env/" + std::to_string(i) + "/value", "env"});
  }
  auto from = var.find("valueFrom");
  if (from == var.end() || !from->is_object()) return env.Set({name, "", "", "env"});
  if (auto field = from->find("fieldRef"); field != from->end() && field->is_object()) {
    if (StringField(*field, "fieldPath") == kJobSetNameField && !jobset_name.empty())
      return env.Set({name, jobset_name, "", "the JobSet's name"});
    return env.Set({name, std::nullopt, "", "a field of the pod"});
  }
  auto ref = from->find("configMapKeyRef");
  if (ref == from->end() || !ref->is_object())
    return env.Set({name, std::nullopt, "", "a Secret or resource field"});
  const std::string cm = StringField(*ref, "name"), key = StringField(*ref, "key");
  const std::string source = "ConfigMap " + ns + "/" + cm;
  if (!configmaps) return env.Set({name, std::nullopt, "", source});
  Result<std::optional<std::string>> data = configmaps->Get(ns, cm, key);
  if (!data.ok() || !*data) {
    const auto optional = ref->find("optional");
    // An optional reference to a missing key sets nothing.
    if (data.ok() && optional != ref->end() && optional->is_boolean() && optional->get<bool>()) return;
    return env.Set({name, std::nullopt, "", source});
  }
  env.Set({name, **data, "", source + " key " + key});
}

}  // namespace

const EnvVariable* ContainerEnv::Find(const std::string& name) const {
  if (index.size() == variables.size()) {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &variables[it->second];
  }
  for (const EnvVariable& v : variables)
    if (v.name == name) return &v;
  return nullptr;
}

KubernetesVariable ContainerEnv::Reference(const std::string& name) const {
  return ReferenceTo(Find(name), may_set_any);
}

ContainerEnv ResolveContainerEnv(const json& container, const std::string& ns,
                                 ConfigMapSource* configmaps, const std::string& jobset_name) {
  EnvBuilder env;
  if (!container.is_object()) return env.Take();
  if (auto from = container.find("envFrom"); from != container.end() && from->is_array())
    for (const json& f : *from) AddEnvFrom(f, ns, configmaps, env);
  if (auto list = container.find("env"); list != container.end() && list->is_array())
    for (size_t i = 0; i < list->size(); ++i)
      AddEnv((*list)[i], i, ns, configmaps, jobset_name, env);
  return env.Take();
}

}  // namespace graintune::workload
