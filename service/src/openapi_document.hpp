#pragma once
// service/api/openapi.json, embedded at build time by cmake/embed_files.cmake (service/CMakeLists.txt).
namespace cuset::service::assets {
extern const char* const openapiJson;
}
