// A figure of a bench document as the tables print it, shared by the render*.cpp files.
#pragma once

#include <iomanip>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace gpurt::bench::render {

// `v` with `digits` decimals; "-" for null or anything not a number (a side that was not measured).
inline std::string num(const nlohmann::json& v, int digits) {
  if (!v.is_number()) return "-";
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v.get<double>();
  return os.str();
}

}  // namespace gpurt::bench::render
