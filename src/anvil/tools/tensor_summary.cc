// Tensor summaries and latency statistics for `anvil run`.
#include "anvil/tools/tensor_summary.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <sstream>

#include "anvil/base/error.h"
#include "anvil/ir/float16.h"

namespace anvil::tools {
namespace {

constexpr int kFirst = 5;

template <typename T>
T* at(const Tensor& t, int64_t i) {
  return static_cast<T*>(t.data()) + i;
}

std::string fmt(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

}  // namespace

double get_element(const Tensor& t, int64_t i) {
  DataType d = t.dtype();
  if (d == DataType::float32()) return *at<float>(t, i);
  if (d == DataType::float64()) return *at<double>(t, i);
  if (d == DataType::float16()) return ir::half_bits_to_double(*at<uint16_t>(t, i));
  if (d == DataType::int64()) return static_cast<double>(*at<int64_t>(t, i));
  if (d == DataType::int32()) return *at<int32_t>(t, i);
  if (d == DataType::int16()) return *at<int16_t>(t, i);
  if (d == DataType::int8()) return *at<int8_t>(t, i);
  if (d == DataType::uint8() || d == DataType::boolean()) return *at<uint8_t>(t, i);
  if (d == DataType::uint16()) return *at<uint16_t>(t, i);
  if (d == DataType::uint32()) return *at<uint32_t>(t, i);
  if (d == DataType::uint64()) return static_cast<double>(*at<uint64_t>(t, i));
  value_error("cannot read elements of dtype ", d);
}

void set_element(Tensor& t, int64_t i, double v) {
  DataType d = t.dtype();
  if (d == DataType::float32()) *at<float>(t, i) = static_cast<float>(v);
  else if (d == DataType::float64()) *at<double>(t, i) = v;
  else if (d == DataType::float16()) *at<uint16_t>(t, i) = ir::double_to_half_bits(v);
  else if (d == DataType::int64()) *at<int64_t>(t, i) = static_cast<int64_t>(v);
  else if (d == DataType::int32()) *at<int32_t>(t, i) = static_cast<int32_t>(v);
  else if (d == DataType::int16()) *at<int16_t>(t, i) = static_cast<int16_t>(v);
  else if (d == DataType::int8()) *at<int8_t>(t, i) = static_cast<int8_t>(v);
  else if (d == DataType::uint8()) *at<uint8_t>(t, i) = static_cast<uint8_t>(v);
  else if (d == DataType::boolean()) *at<uint8_t>(t, i) = v != 0;
  else if (d == DataType::uint16()) *at<uint16_t>(t, i) = static_cast<uint16_t>(v);
  else if (d == DataType::uint32()) *at<uint32_t>(t, i) = static_cast<uint32_t>(v);
  else if (d == DataType::uint64()) *at<uint64_t>(t, i) = static_cast<uint64_t>(v);
  else value_error("cannot generate elements of dtype ", d);
}

std::string summary_line(const NamedTensor& nt) {
  const Tensor& t = nt.tensor;
  std::ostringstream os;
  os << nt.name << "  " << t.dtype() << shape_to_string(t.shape());
  int64_t n = t.numel();
  if (n > 0) {
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      double v = get_element(t, i);
      mn = std::min(mn, v), mx = std::max(mx, v), sum += v;
    }
    os << "  min " << fmt(mn) << "  max " << fmt(mx) << "  mean " << fmt(sum / static_cast<double>(n)) << "  [";
    for (int64_t i = 0; i < std::min<int64_t>(n, kFirst); ++i) os << (i ? ", " : "") << fmt(get_element(t, i));
    os << (n > kFirst ? ", ...]" : "]");
  }
  return os.str();
}

std::string summary_json(const NamedTensor& nt) {
  const Tensor& t = nt.tensor;
  nlohmann::json j;
  j["name"] = nt.name;
  j["dtype"] = str_cat(t.dtype());
  j["shape"] = t.shape();
  int64_t n = t.numel();
  if (n > 0) {
    double mn = INFINITY, mx = -INFINITY, sum = 0;
    std::vector<double> first;
    for (int64_t i = 0; i < n; ++i) {
      double v = get_element(t, i);
      mn = std::min(mn, v), mx = std::max(mx, v), sum += v;
      if (i < kFirst) first.push_back(v);
    }
    j["min"] = mn, j["max"] = mx, j["mean"] = sum / static_cast<double>(n), j["first"] = first;
  }
  return j.dump();
}

LatencyStats latency_stats(std::vector<double> ms) {
  LatencyStats s;
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  size_t n = ms.size();
  s.min = ms.front(), s.max = ms.back();
  s.median = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  for (double v : ms) s.mean += v;
  s.mean /= static_cast<double>(n);
  for (double v : ms) s.std += (v - s.mean) * (v - s.mean);
  s.std = std::sqrt(s.std / static_cast<double>(n));
  return s;
}

}  // namespace anvil::tools
