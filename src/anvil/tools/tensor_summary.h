// Printing tensors for the CLI: one line per tensor (name, dtype, shape, min/max/mean and the
// first values) or a JSON object; latency statistics; element access by flat index.
#pragma once

#include <string>
#include <vector>

#include "anvil/tools/npz.h"

namespace anvil::tools {

// "logits  float32[1, 1000]  min -3.1 max 4.2 mean 0.01  [0.12, -0.5, ...]"
std::string summary_line(const NamedTensor& t);
std::string summary_json(const NamedTensor& t);  // {"name", "dtype", "shape", "min", "max", "mean", "first"}

double get_element(const Tensor& t, int64_t i);
void set_element(Tensor& t, int64_t i, double v);

struct LatencyStats {
  double mean = 0, median = 0, std = 0, min = 0, max = 0;
};
LatencyStats latency_stats(std::vector<double> ms);

// What one run produced, locally or remotely.
struct RunResult {
  std::vector<NamedTensor> inputs, outputs;
  std::vector<double> latencies_ms;
  std::string profile_table, profile_json;
};

}  // namespace anvil::tools
