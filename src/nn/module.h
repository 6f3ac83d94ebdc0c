// Module: something with named parameters. Layers and models are Modules; the
// names ("blocks.0.attn.w_q.weight") are what checkpoints store.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.h"

namespace seqgrad::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  // Children register themselves by address, so a Module never moves.
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // Every parameter, own and children's, with its dotted name, in a fixed order.
  std::vector<std::pair<std::string, ag::Tensor>> named_parameters() const;
  std::vector<ag::Tensor> parameters() const;
  std::size_t num_parameters() const;  // count of scalars
  void zero_grad();

 protected:
  // Registers a parameter under `name` and returns it (requires_grad is set).
  ag::Tensor add_parameter(const std::string& name, ag::Tensor tensor);
  // Registers a child whose parameters are listed as "<name>.<its name>".
  void add_module(const std::string& name, Module& child);

 private:
  std::vector<std::pair<std::string, ag::Tensor>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
};

}  // namespace seqgrad::nn
