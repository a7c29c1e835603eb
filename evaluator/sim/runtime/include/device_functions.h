#pragma once
// The toolkit's device_functions.h is an internal header of the CUDA compiler's device pass; on the
// CPU simulator the prelude (cuset_sim/prelude.hpp) already provides every device function.
#include "cuset_sim/prelude.hpp"
