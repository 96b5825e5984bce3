// The statistics every `gpurt bench` row shares: the median of trials, and a row of gpurt against a
// baseline from trials taken in turn (paired()).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpurt::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n == 0 ? 0.0 : (n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]));
}

// One row of gpurt against a baseline from trials taken in turn (gpurt trial i, then baseline trial
// i): for each side the median and the spread (min..max over the trials), and the ratio gpurt /
// baseline as the median of the per-trial ratios (trial i against trial i) with their min..max.
// `base` names the baseline's fields ("raw"; "slower_link" for the relayed copy); every trial's
// figure is kept too (gpurt_trials, raw_trials), in the order taken.
inline nlohmann::json paired(const std::vector<double>& g, const std::vector<double>& r, const std::string& base = "raw") {
  std::vector<double> ratios;
  for (std::size_t i = 0; i < g.size() && i < r.size(); ++i) ratios.push_back(r[i] > 0 ? g[i] / r[i] : 0.0);
  auto low = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); };
  auto high = [](const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); };
  return {{"gpurt", median(g)}, {base, median(r)}, {"ratio", median(ratios)},
          {"gpurt_min", low(g)}, {"gpurt_max", high(g)}, {base + "_min", low(r)}, {base + "_max", high(r)},
          {"ratio_min", low(ratios)}, {"ratio_max", high(ratios)}, {"trials", ratios.size()},
          {"gpurt_trials", g}, {base + "_trials", r}};
}

}  // namespace gpurt::bench
