#include "launcher/launch_plan.h"

#include <cctype>
#include <charconv>

namespace graintune::launcher {
namespace {

// A whole non-negative number that fits a size_t, or nullopt.
std::optional<size_t> ParseIndex(std::string_view text) {
  size_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::vector<std::string_view> SplitColons(std::string_view text) {
  std::vector<std::string_view> parts;
  for (size_t at = 0;;) {
    const size_t colon = text.find(':', at);
    parts.push_back(text.substr(at, colon == std::string_view::npos ? text.npos : colon - at));
    if (colon == std::string_view::npos) return parts;
    at = colon + 1;
  }
}

// `word` as one shell word: as it is when every byte is plain, else in double quotes with the
// four bytes special there escaped (the lap's paths come from the webhook; `profiler=''` needs it).
std::string ShellWord(const std::string& word) {
  const bool plain = word.find_first_not_of(
                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_=./:,+-@%") ==
                     std::string::npos;
  if (plain && !word.empty()) return word;
  std::string quoted = "\"";
  for (char c : word) {
    if (c == '"' || c == '\\' || c == '$' || c == '`') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

std::string LapMarkerPath(const std::string& lap_directory) {
  std::string path = lap_directory;
  while (path.size() > 1 && path.back() == '/') path.pop_back();  // "lap/" names the folder "lap"
  return path + ".started";
}

std::vector<std::string> LapWords(const LapOverrides& o) {
  // Checked against maxtext 0.2.5's pyconfig (tests/maxtext_config/test_practice_lap.py): each
  // key exists, MaxText accepts each value, and none makes it write outside output_directory
  // (no checkpoint, tensorboard, profile, HLO dump, GCS metrics or config, goodput record).
  std::vector<std::string> words = {"steps=" + std::to_string(o.steps),
          "enable_checkpointing=false",
          "async_checkpointing=false",
          "base_output_directory=" + o.output_directory,
          "run_name=" + o.run_name,
          "metrics_file=" + o.metrics_file,
          "eval_interval=-1",
          "enable_tensorboard=false",
          "gcs_metrics=false",
          "save_config_to_gcs=false",
          "dump_hlo=false",
          "enable_goodput_recording=false",
          "monitor_goodput=false",
          "managed_mldiagnostics=false",
          // MaxText reads the empty profiler from a quoted empty YAML string; a bare
          // `profiler=` is refused.
          "profiler=''"};
  if (o.schedule_steps)
    words.push_back("learning_rate_schedule_steps=" + std::to_string(*o.schedule_steps));
  return words;
}

std::vector<std::string> EnvNamesOf(const std::vector<std::string>& words) {
  std::vector<std::string> names;
  for (const std::string& word : words) {
    std::string name = "M_" + word.substr(0, word.find('='));
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    names.push_back(std::move(name));
  }
  return names;
}

Result<ValueSite> ParseValueAt(const std::string& text) {
  const std::vector<std::string_view> parts = SplitColons(text);
  if (parts.size() != 3)
    return Status::Error("--value-at '" + text + "': expected ARG:BEGIN:END");
  const std::optional<size_t> arg = ParseIndex(parts[0]), begin = ParseIndex(parts[1]),
                              end = ParseIndex(parts[2]);
  if (!arg || !begin || !end || *begin >= *end)
    return Status::Error("--value-at '" + text + "': expected ARG:BEGIN:END, BEGIN < END");
  return ValueSite{.arg = *arg, .begin = *begin, .end = *end, .env_name = ""};
}

Result<LapInsertion> ParseLapInsertion(const std::string& text, bool in_script) {
  const std::vector<std::string_view> parts = SplitColons(text);
  const char* flag = in_script ? "--lap-in-script" : "--lap-after-arg";
  if (parts.size() != (in_script ? 2u : 1u))
    return Status::Error(std::string(flag) + " '" + text + "': expected " +
                         (in_script ? "ARG:OFFSET" : "ARG"));
  const std::optional<size_t> arg = ParseIndex(parts[0]);
  const std::optional<size_t> offset = in_script ? ParseIndex(parts[1]) : size_t{0};
  if (!arg || !offset) return Status::Error(std::string(flag) + " '" + text + "': not a number");
  return LapInsertion{.arg = *arg, .in_script = in_script, .offset = *offset};
}

Result<std::vector<std::string>> LapArgv(const std::vector<std::string>& argv,
                                         const LapInsertion& insertion,
                                         const std::vector<std::string>& words) {
  if (insertion.arg >= argv.size())
    return Status::Error("the lap's overrides go after argument " +
                         std::to_string(insertion.arg) + ", but the command has " +
                         std::to_string(argv.size()));
  std::vector<std::string> lap = argv;
  if (!insertion.in_script) {
    lap.insert(lap.begin() + static_cast<std::ptrdiff_t>(insertion.arg) + 1, words.begin(),
               words.end());
    return lap;
  }
  std::string& script = lap[insertion.arg];
  if (insertion.offset > script.size())
    return Status::Error("the lap's overrides go at byte " + std::to_string(insertion.offset) +
                         " of a script of " + std::to_string(script.size()) + " bytes");
  std::string inserted;
  for (const std::string& word : words) inserted += " " + ShellWord(word);
  script.insert(insertion.offset, inserted);
  return lap;
}

Result<Command> WithValue(const std::vector<std::string>& argv, const ValueSite& site, int written,
                          int workers, const std::optional<std::string>& env_now) {
  if (workers < 1) return Status::Error("a value below 1 (" + std::to_string(workers) + ")");
  Command command{.argv = argv, .set_env = {}};
  if (!site.env_name.empty()) {
    if (env_now != std::to_string(written))
      return Status::Error(site.env_name + " is '" + env_now.value_or("(unset)") +
                           "', not the count graintune wrote (" + std::to_string(written) + ")");
    command.set_env.emplace_back(site.env_name, std::to_string(workers));
    return command;
  }
  if (site.arg >= argv.size() || site.end > argv[site.arg].size())
    return Status::Error("the value's place (argument " + std::to_string(site.arg) + ", bytes " +
                         std::to_string(site.begin) + "-" + std::to_string(site.end) +
                         ") is outside the command");
  std::string& element = command.argv[site.arg];
  const std::string_view held =
      std::string_view(element).substr(site.begin, site.end - site.begin);
  if (held != std::to_string(written))
    return Status::Error("the value's place holds '" + std::string(held) +
                         "', not the count graintune wrote (" + std::to_string(written) + ")");
  element.replace(site.begin, site.end - site.begin, std::to_string(workers));
  return command;
}


}  // namespace graintune::launcher
