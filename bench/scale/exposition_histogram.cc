#include "bench/scale/exposition_histogram.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace graintune::bench {

HistogramReading HistogramReading::Since(const HistogramReading& earlier) const {
  HistogramReading out;
  for (const auto& [bound, count] : cumulative) {
    auto it = earlier.cumulative.find(bound);
    out.cumulative[bound] = count - (it == earlier.cumulative.end() ? 0 : it->second);
  }
  return out;
}

std::optional<double> HistogramReading::QuantileBound(double q) const {
  const double total = Count();
  if (total <= 0) return std::nullopt;
  for (const auto& [bound, count] : cumulative)
    if (count >= q * total) return bound;
  return std::numeric_limits<double>::infinity();
}

double HistogramReading::ShareUnder(double bound) const {
  const double total = Count();
  auto it = cumulative.find(bound);
  return total <= 0 || it == cumulative.end() ? 0 : it->second / total;
}

HistogramReading ReadHistogram(const std::string& exposition, const std::string& name,
                               const std::vector<std::string>& label_parts) {
  HistogramReading out;
  const std::string prefix = name + "_bucket{";
  std::istringstream lines(exposition);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const size_t close = line.rfind('}');
    if (close == std::string::npos || close < prefix.size()) continue;
    const std::string labels = line.substr(prefix.size(), close - prefix.size());
    bool wanted = true;
    for (const std::string& part : label_parts) wanted = wanted && labels.find(part) != std::string::npos;
    size_t le = labels.find("le=\"");
    while (le != std::string::npos && le > 0 && labels[le - 1] != ',') le = labels.find("le=\"", le + 1);
    if (!wanted || le == std::string::npos) continue;
    const size_t le_end = labels.find('"', le + 4);
    if (le_end == std::string::npos) continue;
    const std::string bound_text = labels.substr(le + 4, le_end - le - 4);
    const double bound = bound_text == "+Inf" ? std::numeric_limits<double>::infinity()
                                               : std::strtod(bound_text.c_str(), nullptr);
    char* end = nullptr;
    const double count = std::strtod(line.c_str() + close + 1, &end);
    if (end == line.c_str() + close + 1 || !std::isfinite(count)) continue;
    out.cumulative[bound] += count;
  }
  return out;
}

std::map<std::string, double> ReadCounterByLabel(const std::string& exposition, const std::string& name,
                                                 const std::string& label) {
  std::map<std::string, double> out;
  const std::string prefix = name + "{" + label + "=\"";
  for (size_t at = exposition.find(prefix); at != std::string::npos; at = exposition.find(prefix, at + 1)) {
    if (at > 0 && exposition[at - 1] != '\n') continue;
    const size_t quote = exposition.find('"', at + prefix.size());
    const size_t space = quote == std::string::npos ? quote : exposition.find("} ", quote);
    if (space == std::string::npos) break;
    out[exposition.substr(at + prefix.size(), quote - at - prefix.size())] =
        std::strtod(exposition.c_str() + space + 2, nullptr);
  }
  return out;
}

}  // namespace graintune::bench
