// Each family of labs adds itself to the list. Internal to src/labs.
#pragma once

#include "src/labs/lab.h"

namespace seqgrad::labs {

// A lab's claim as the catalogue has it in English (src/text/catalogue_web.inc
// holds both languages: the browser bench shows either).
std::string claim(const std::string& name);

void add_attention_labs(std::vector<Lab>& labs);  // attention_labs.cpp
void add_position_labs(std::vector<Lab>& labs);   // position_labs.cpp
void add_chain_labs(std::vector<Lab>& labs);      // chain_labs.cpp
void add_training_labs(std::vector<Lab>& labs);   // training_labs.cpp
void add_chapter_labs(std::vector<Lab>& labs);    // chapter_labs.cpp

}  // namespace seqgrad::labs
