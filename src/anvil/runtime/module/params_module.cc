// The "params" module kind and its loader.
#include "anvil/runtime/module/params_module.h"

#include "anvil/runtime/registry.h"
#include "anvil/runtime/tensor_io.h"

namespace anvil {
namespace {

class ParamsModuleNode final : public ModuleNode {
 public:
  explicit ParamsModuleNode(std::map<std::string, Tensor> params) : params_(std::move(params)) {}
  std::string kind() const override { return "params"; }
  bool is_binary_serializable() const override { return true; }
  std::string save_to_bytes() const override { return save_params(params_); }
  std::vector<std::string> list_functions() const override { return {"get_param", "list_params", "num_params"}; }

  std::optional<Function> get_local_function(const std::string& name) override {
    // Functions capture a reference to the node so they stay valid after the module is dropped.
    Ref<ParamsModuleNode> self(this);
    if (name == "get_param")
      return Function::from_typed(
          [self](const std::string& key) -> Tensor {
            auto it = self->params_.find(key);
            if (it == self->params_.end()) value_error("get_param: no parameter named '", key, "'");
            return it->second;
          },
          "get_param");
    if (name == "list_params")
      return Function::from_typed(
          [self]() {
            std::vector<Value> names;
            for (const auto& entry : self->params_) names.emplace_back(entry.first);
            return Value(std::move(names));
          },
          "list_params");
    if (name == "num_params")
      return Function::from_typed([self]() { return static_cast<int64_t>(self->params_.size()); }, "num_params");
    return std::nullopt;
  }

 private:
  std::map<std::string, Tensor> params_;
};

}  // namespace

Module make_params_module(std::map<std::string, Tensor> params) {
  return Module(make_object<ParamsModuleNode>(std::move(params)));
}

}  // namespace anvil
