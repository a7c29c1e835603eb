#pragma once
// CUDA's pipeline header on the CPU simulator: the primitives (cuda_pipeline_primitives.h), whose
// copies land only when waited for.
#include "cuda_pipeline_primitives.h"
