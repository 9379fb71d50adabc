#pragma once
// Reading a window setting: `window: NAME` or `window: 'kaiser:BETA'`, or
// `window: kaiser` with `beta: BETA` next to it (fir designs, resample).
#include "stages/types.hpp"

namespace sigstream::config {

class Context;
class MapReader;

// The window of the mapping `r` reads, from its `window` key (whose table
// row gives the default) and `beta`; problems go to `cx` (then a default
// window is returned).
WindowSpec read_window_setting(Context& cx, MapReader& r);

} // namespace sigstream::config
