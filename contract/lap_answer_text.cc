#include "contract/lap_answer_text.h"

#include <charconv>
#include <string_view>

namespace graintune::contract {
namespace {

constexpr std::string_view kNone = "none";

}  // namespace

std::string FormatLapValue(int workers) { return std::to_string(workers); }

std::string FormatNoLapValue(const std::string& why) { return std::string(kNone) + ": " + why; }

Result<LapAnswerText> ParseLapAnswerText(const std::string& text_in) {
  std::string_view text = text_in;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return LapAnswerText{};
  if (text.starts_with(kNone)) {
    std::string_view why = text.substr(kNone.size());
    if (why.starts_with(":")) why.remove_prefix(1);
    while (why.starts_with(" ")) why.remove_prefix(1);
    return LapAnswerText{.decided = true, .workers = std::nullopt, .why = std::string(why)};
  }
  int workers = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), workers);
  if (error != std::errc() || end != text.data() + text.size() || workers < 1 || text.front() == '0')
    return Status::Error("the lap's answer '" + std::string(text.substr(0, 64)) +
                         "' is neither a count nor 'none: <why>'");
  return LapAnswerText{.decided = true, .workers = workers, .why = ""};
}

}  // namespace graintune::contract
