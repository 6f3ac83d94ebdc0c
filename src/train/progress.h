// What a person sees while a run trains: a progress bar redrawn in place on a
// terminal (loss, accuracy, steps/s, ETA), or a plain line every so often
// when the output is a file or a pipe.
#pragma once

#include <cstdio>
#include <string>

#include "src/train/trainer.h"

namespace seqgrad::train {

// `label` names the run ("transformer on copy"). `out` is where it draws (stderr, usually).
TrainObserver progress_printer(std::FILE* out, const std::string& label);

}  // namespace seqgrad::train
