#pragma once
// The options every command that talks to an OpenAI-compatible endpoint shares (`generate`,
// `refine`): registered once, applied to EndpointGenerateOptions after parsing.
#include <CLI/CLI.hpp>

#include <memory>

#include "cuset/models/endpoint_generation.hpp"

namespace cuset::cli {

struct EndpointFlags {
  CLI::Option* endpoint = nullptr;  // --endpoint; the others need it
  double requestTimeoutSeconds = 600.0;
  double retryDelaySeconds = 1.0;
  bool noN = false;
};

// --endpoint, --api-key-env, --concurrency, --request-timeout, --max-retries, --retry-delay,
// --ca-bundle, --no-n; all but --endpoint require --endpoint.
std::shared_ptr<EndpointFlags> addEndpointOptions(CLI::App* cmd, EndpointGenerateOptions& options);
void applyEndpointFlags(const EndpointFlags& flags, EndpointGenerateOptions& options);

}  // namespace cuset::cli
