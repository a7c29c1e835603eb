#include "endpoint_options.hpp"

namespace cuset::cli {

std::shared_ptr<EndpointFlags> addEndpointOptions(CLI::App* cmd, EndpointGenerateOptions& e) {
  auto f = std::make_shared<EndpointFlags>();
  f->endpoint =
      cmd->add_option("--endpoint", e.endpoint.baseUrl, "OpenAI-compatible API base (http://host:8000/v1); --model is then the served model's name");
  const std::vector<CLI::Option*> endpointOnly = {
      cmd->add_option("--api-key-env", e.endpoint.apiKeyEnv, "Environment variable holding the API key (sent as a bearer token, never written)"),
      cmd->add_option("--concurrency", e.endpoint.concurrency, "Requests in flight at most")->capture_default_str(),
      cmd->add_option("--request-timeout", f->requestTimeoutSeconds, "Seconds one request may take")
          ->check(CLI::Range(0.1, 86400.0))
          ->capture_default_str(),
      cmd->add_option("--max-retries", e.endpoint.retry.maxRetries, "Retries of a request on connection errors, timeouts, 429 and 5xx")
          ->check(CLI::Range(0, 1000))
          ->capture_default_str(),
      cmd->add_option("--retry-delay", f->retryDelaySeconds,
                      "First retry's backoff ceiling in seconds (doubles per retry, up to 60 s; Retry-After wins)")
          ->check(CLI::Range(0.0, 3600.0))
          ->capture_default_str(),
      cmd->add_option("--ca-bundle", e.endpoint.caBundle, "PEM file of CAs to trust for HTTPS (default: the system's)"),
      cmd->add_flag("--no-n", f->noN, "One request per sample, never n > 1 in one request"),
  };
  for (auto* option : endpointOnly) option->needs(f->endpoint);
  return f;
}

void applyEndpointFlags(const EndpointFlags& f, EndpointGenerateOptions& e) {
  e.endpoint.requestTimeout = std::chrono::milliseconds(static_cast<long long>(f.requestTimeoutSeconds * 1000));
  e.endpoint.retry.base = std::chrono::duration<double>(f.retryDelaySeconds);
  e.useN = !f.noN;
}

}  // namespace cuset::cli
