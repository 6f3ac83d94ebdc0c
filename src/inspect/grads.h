// Gradients per time step: how much the loss at the last position feels each
// earlier input. For a recurrent model the signal from x_t passes through every
// step after t and shrinks (or grows) on the way; attention reaches every
// position in one step.
#pragma once

#include <string>
#include <vector>

#include "src/nn/model.h"
#include "src/tasks/task.h"

namespace seqgrad::inspect {

struct GradProfile {
  std::vector<int> distance;                     // T-1-t for t = 0..T-1: distance to the loss position
  std::vector<double> grad_norm_x;               // |dL/dx_t| over the batch, by t
  std::vector<std::vector<double>> grad_norm_h;  // recurrent models: [layer][t] |dL/dh_t|; empty otherwise
  double loss = 0;
  // |dL/dx| at the farthest position over that at the nearest: the chapter's vanishing gradient in one number.
  double decay() const;
};

// On one batch, the loss taken at the final position only (cross-entropy of
// its target, or the adding task's squared error), backward, and the norm of
// the gradient at every position. Norms are summed in double: squares of
// float32 values near 1e-25 would underflow and fake a floor.
GradProfile gradient_profile(const nn::SequenceModel& model, const tasks::Task& task, const tasks::Batch& batch);

// The chain of the chapter for an Elman RNN (layer 0): the norm of the product
// of Jacobians dh_T/dh_{T-k} = prod diag(1 - h^2) W_h^T against k, on one sequence.
struct JacobianChain {
  std::string label;           // "trained", "radius 0.5", ...
  double spectral_radius = 0;  // of W_h: its largest |eigenvalue|, the long-run rate of the product
  double spectral_norm = 0;    // of W_h: its largest singular value, the most one step can stretch
  std::vector<double> norm;    // norm[k-1] = ||dh_T/dh_{T-k}||_2, k = 1..T-1
};

// For the model's own W_h ("this model"), and for W_h rescaled to each of `radii` ("radius 0.5").
std::vector<JacobianChain> jacobian_chains(const nn::SequenceModel& rnn, const tasks::Batch& batch,
                                           const std::vector<double>& radii);

// A chain's label as the reader's language says it ("this model", "radius 0.5"
// are the data's; in Korean "이 모델", "반지름 0.5").
std::string chain_label(const std::string& label);

// Spectral radius (largest |eigenvalue|) of a square matrix, by Gelfand's
// formula rho = lim ||A^k||^(1/k), with k = 2^30 reached by repeated squaring.
double spectral_radius(const std::vector<double>& a, int n);
// Largest singular value, by power iteration on A^T A.
double spectral_norm(const std::vector<double>& a, int n);

}  // namespace seqgrad::inspect
