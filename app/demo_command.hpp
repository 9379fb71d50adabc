#pragma once
// `sigstream` with no command: the built-in demo (configs/demo.yaml).
#include "app/common.hpp"

namespace sigstream::app {

int run_demo(const CommonFlags& common);

} // namespace sigstream::app
