// A deployment-side program: links libanvil_runtime alone (no compiler, no LLVM, no protobuf),
// loads a compiled kernel library and runs a kernel on tensors. Usage:
//   anvil_runtime_only_example <library.so> [function=vector_add] [n=1000000]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "anvil/runtime/module/module.h"
#include "anvil/runtime/register.h"
#include "anvil/runtime/tensor.h"

int main(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) == "--help") {
    std::printf("usage: %s <library.so> [function=vector_add] [n=1000000]\n"
                "Loads a kernel library with the Anvil runtime alone and runs c = a + b.\n",
                argv[0]);
    return argc < 2 ? 2 : 0;
  }
  std::string function = argc > 2 ? argv[2] : "vector_add";
  int64_t n = argc > 3 ? std::atoll(argv[3]) : 1000000;
  try {
    anvil::register_runtime_functions();
    anvil::Module lib = anvil::Module::load_from_file(argv[1]);
    anvil::Tensor a = anvil::Tensor::empty({n}, anvil::DataType::float32());
    anvil::Tensor b = anvil::Tensor::empty({n}, anvil::DataType::float32());
    anvil::Tensor c = anvil::Tensor::empty({n}, anvil::DataType::float32());
    std::mt19937 gen(7);
    std::uniform_real_distribution<float> dist(-1, 1);
    auto* pa = static_cast<float*>(a.data());
    auto* pb = static_cast<float*>(b.data());
    for (int64_t i = 0; i < n; ++i) pa[i] = dist(gen), pb[i] = dist(gen);
    anvil::Function f = lib[function];
    auto start = std::chrono::steady_clock::now();
    f(a, b, c);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    auto* pc = static_cast<float*>(c.data());
    int64_t wrong = 0;
    for (int64_t i = 0; i < n; ++i) wrong += pc[i] != pa[i] + pb[i];
    std::printf("%s on %lld elements: %.3f ms, %lld mismatches vs the reference loop\n", function.c_str(),
                static_cast<long long>(n), ms, static_cast<long long>(wrong));
    return wrong == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
