// numpy's .npy and .npz files, for `anvil run --inputs in.npz --outputs out.npz`: what
// np.save / np.savez / np.savez_compressed write and np.load reads.
//
//   std::vector<NamedTensor> ins = read_npz("in.npz");        // in file order
//   write_npz("out.npz", {{"logits", t}});                    // stored (uncompressed) entries
//
// Reads stored and deflate-compressed entries, zip64 sizes, .npy versions 1-3; dtypes
// float16/32/64, int8/16/32/64, uint8/16/32/64, bool, little-endian, C order. Anything else
// (Fortran order, big-endian, object arrays, a truncated or corrupt file) is a ValueError
// naming the file, the entry and what was wrong. Entry names drop their ".npy" suffix.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "anvil/runtime/tensor.h"

namespace anvil::tools {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// One .npy file's bytes -> tensor; `what` names it in errors.
Tensor parse_npy(std::string_view bytes, const std::string& what);
std::string format_npy(const Tensor& tensor);

std::vector<NamedTensor> parse_npz(std::string_view bytes, const std::string& what);
std::string format_npz(const std::vector<NamedTensor>& tensors);

std::vector<NamedTensor> read_npz(const std::string& path);  // IOError when unreadable
void write_npz(const std::string& path, const std::vector<NamedTensor>& tensors);

}  // namespace anvil::tools
