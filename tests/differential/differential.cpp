// The differential check's comparisons.
#include "differential.hpp"

#include <cmath>
#include <sstream>

namespace gpurt::test {

namespace {

Comparison compare(const std::vector<double>& reference, const std::vector<double>* scale, double bound,
                   const std::vector<DeviceResult>& results) {
  Comparison c;
  std::ostringstream report;
  report.precision(12);
  for (const DeviceResult& r : results) {
    double worst = 0;
    std::size_t where = 0, wrong = 0;
    if (r.values.size() != reference.size()) {
      c.agree = false;
      report << "  " << r.device << ": " << r.values.size() << " values, expected " << reference.size() << "\n";
      continue;
    }
    for (std::size_t i = 0; i < reference.size(); ++i) {
      const double diff = std::abs(r.values[i] - reference[i]);
      const double measured = scale ? diff / std::max((*scale)[i], 1e-300) : diff;
      const bool bad = scale ? measured > bound : diff != 0;
      wrong += bad;
      if (measured > worst || (bad && wrong == 1)) {
        worst = std::max(worst, measured);
        where = i;
      }
    }
    report << "  " << r.device << " vs CPU: " << (wrong ? "DIFFERS" : "agrees") << ", " << wrong << " of "
           << reference.size() << " elements out of bound, largest difference " << worst;
    if (!reference.empty())
      report << " (element " << where << ": " << r.values[where] << " vs " << reference[where] << ")";
    report << "\n";
    if (wrong) c.agree = false;
    if (worst > c.largest_difference || (wrong && c.worst.empty())) {
      c.largest_difference = std::max(c.largest_difference, worst);
      std::ostringstream w;
      w.precision(12);
      w << r.device << " at element " << where << ": " << r.values[where] << " vs CPU " << reference[where];
      c.worst = w.str();
    }
  }
  for (std::size_t a = 0; a < results.size(); ++a)
    for (std::size_t b = a + 1; b < results.size(); ++b) {
      double worst = 0;
      const std::size_t n = std::min(results[a].values.size(), results[b].values.size());
      for (std::size_t i = 0; i < n; ++i) {
        const double diff = std::abs(results[a].values[i] - results[b].values[i]);
        worst = std::max(worst, scale ? diff / std::max((*scale)[i], 1e-300) : diff);
      }
      report << "  " << results[a].device << " vs " << results[b].device << ": largest difference " << worst << "\n";
    }
  c.report = report.str();
  return c;
}

}  // namespace

Comparison compare_exact(const std::vector<double>& reference, const std::vector<DeviceResult>& results) {
  return compare(reference, nullptr, 0, results);
}

Comparison compare_bounded(const std::vector<double>& reference, const std::vector<double>& scale, double bound,
                           const std::vector<DeviceResult>& results) {
  return compare(reference, &scale, bound, results);
}

}  // namespace gpurt::test
