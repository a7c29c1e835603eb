#pragma once
// The recorder's stand-in (cuset_kb/torch.hpp): one header for the whole extension API.
#include "cuset_kb/torch.hpp"
