// Constructors of the concrete tasks, for make_task (task.cpp). Internal.
#pragma once

#include "src/tasks/task.h"

namespace seqgrad::tasks {

std::unique_ptr<Task> make_copy_task(const std::string& variant, int len);  // copy | reverse | sort
std::unique_ptr<Task> make_recall_task(int len);
std::unique_ptr<Task> make_assoc_task(int pairs, int keys);
std::unique_ptr<Task> make_copy_memory_task(int len);
std::unique_ptr<Task> make_adding_task(int len);
std::unique_ptr<Task> make_lookback_task(int len);
std::unique_ptr<Task> make_modsum_task(int len);
std::unique_ptr<Task> make_text_task(const TaskOptions& options);  // lm | words

}  // namespace seqgrad::tasks
