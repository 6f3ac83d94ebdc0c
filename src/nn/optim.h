// Optimisers (SGD with momentum, Adam, AdamW), gradient clipping by global
// norm, and learning-rate schedules.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "autograd/tensor.h"
#include "src/nn/choices.h"

namespace seqgrad::nn {

struct OptimizerConfig {
  choices::Optimizer kind = choices::Optimizer::adam;
  double lr = 1e-3;
  double momentum = 0.9;                         // sgd
  double beta1 = 0.9, beta2 = 0.98, eps = 1e-9;  // the paper's Adam settings
  double weight_decay = 0;  // adam: added to the gradient (L2); adamw: decoupled, applied to the weights
  void validate() const;    // throws std::invalid_argument naming the bad field
};

// Parameters with their names; the optimiser's state is kept per name so that
// it can be saved and restored with a checkpoint.
class Optimizer {
 public:
  Optimizer(std::vector<std::pair<std::string, ag::Tensor>> params, OptimizerConfig config);
  // One update with learning rate `lr` (the schedule's value for this step).
  void step(double lr);
  long steps_taken() const { return t_; }

  // State, as named vectors (kept in double, saved exactly) ("m.<param>", "v.<param>", "momentum.<param>"), and the
  // step count.
  std::vector<std::pair<std::string, std::vector<double>>> state() const;
  void load_state(const std::vector<std::pair<std::string, std::vector<double>>>& state, long steps);

 private:
  std::vector<std::pair<std::string, ag::Tensor>> params_;
  OptimizerConfig config_;
  std::vector<std::vector<double>> m_, v_;  // first moment / momentum buffer, second moment; double keeps tiny updates
  long t_ = 0;
};

// Scales every gradient so that their global L2 norm is at most max_norm
// (max_norm <= 0: no clipping). Returns the norm before clipping.
double clip_grad_norm(const std::vector<ag::Tensor>& params, double max_norm);

struct Schedule {
  std::string kind = "constant";  // one of choices::schedules
  int warmup = 0;                 // steps of linear warmup (warmup-rsqrt, cosine)
  int total = 0;                  // steps in the run (cosine)
  // The learning rate at step (1-based) for a peak rate base_lr:
  //   constant:      base_lr
  //   warmup-rsqrt:  base_lr * min(step / warmup, sqrt(warmup / step)), the paper's schedule normalised to peak at
  //   base_lr cosine:        linear warmup, then base_lr * (1 + cos(pi * progress)) / 2 down to 0 at `total`
  double lr(double base_lr, long step) const;
  void validate() const;
};

}  // namespace seqgrad::nn
