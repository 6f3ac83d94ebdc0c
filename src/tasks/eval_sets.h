// Fixed held-out sets, shipped in data/eval/ so that a figure measured today
// can be compared with one measured by a later version: one sequence per line,
// "tokens<TAB>targets<TAB>features<TAB>values", each a space-separated list.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "src/tasks/task.h"

namespace seqgrad::tasks {

constexpr int kEvalSetSize = 256;             // sequences per shipped set
constexpr std::uint64_t kEvalSetSeed = 1706;  // the seed they were drawn from

// data_dir()/eval/<task>-<len>.tsv
std::string eval_set_path(const TaskInfo& info);

// Draws `count` sequences from `seed`: the text of a set in the format above.
std::string format_eval_set(const Task& task, int count, std::uint64_t seed);

// The shipped set for this task and length, in batches of `batch`, if there is one.
// Throws std::runtime_error naming the file and line when it is damaged.
std::optional<std::vector<Batch>> read_eval_set(const Task& task, int batch);

}  // namespace seqgrad::tasks
