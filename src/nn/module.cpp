#include "src/nn/module.h"

namespace seqgrad::nn {

ag::Tensor Module::add_parameter(const std::string& name, ag::Tensor tensor) {
  tensor.set_requires_grad(true);
  tensor.set_label(name);
  params_.emplace_back(name, tensor);
  return tensor;
}

void Module::add_module(const std::string& name, Module& child) { children_.emplace_back(name, &child); }

std::vector<std::pair<std::string, ag::Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, ag::Tensor>> all = params_;
  for (const auto& [prefix, child] : children_) {
    for (auto& [name, t] : child->named_parameters()) all.emplace_back(prefix + "." + name, t);
  }
  return all;
}

std::vector<ag::Tensor> Module::parameters() const {
  std::vector<ag::Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

std::size_t Module::num_parameters() const {
  std::size_t n = 0;
  for (const auto& [name, t] : named_parameters()) n += t.numel();
  return n;
}

void Module::zero_grad() {
  for (auto& [name, t] : named_parameters()) t.zero_grad();
}

}  // namespace seqgrad::nn
