#include "webhook/worker_count_edit.h"

#include "workload/container_overrides.h"

namespace graintune::webhook {

using json = nlohmann::json;

std::string ApplyEdit(json& object, const Edit& e, int value) {
  const std::string text = std::to_string(value);
  switch (e.op) {
    case Edit::Op::kReplaceRange: {
      json& s = object[json::json_pointer(e.container_pointer + e.pointer)];
      s.get_ref<std::string&>().replace(e.begin, e.end - e.begin, text);
      return e.container_pointer + e.pointer;
    }
    case Edit::Op::kInsertText: {
      json& s = object[json::json_pointer(e.container_pointer + e.pointer)];
      s.get_ref<std::string&>().insert(e.begin, " " + e.key + "=" + text);
      return e.container_pointer + e.pointer;
    }
    case Edit::Op::kInsertArg: {
      // pointer is /args/N or /command/N: insert after N.
      const size_t slash = e.pointer.rfind('/');
      const std::string array = e.pointer.substr(0, slash);
      const long index = std::stol(e.pointer.substr(slash + 1));
      json& arr = object[json::json_pointer(e.container_pointer + array)];
      arr.insert(arr.begin() + index + 1, e.key + "=" + text);
      return e.container_pointer + array + "/" + std::to_string(index + 1);
    }
    case Edit::Op::kAppendEnv: {
      json& env = object[json::json_pointer(e.container_pointer + "/env")];
      if (!env.is_array()) env = json::array();
      env.push_back({{"name", workload::EnvNameForKey(e.key)}, {"value", text}});
      return e.container_pointer + "/env/" + std::to_string(env.size() - 1);
    }
  }
  return e.container_pointer;
}

}  // namespace graintune::webhook
