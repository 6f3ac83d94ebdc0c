// The errors the engine throws. Library code never exits: it throws, and main
// catches, prints one line and returns a code.
#pragma once

#include <stdexcept>
#include <string>

namespace ag {

// Two shapes that an op cannot combine. The message names the op and both shapes.
class ShapeError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Any other wrong argument (an index out of range, a negative probability...).
class ValueError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace ag
