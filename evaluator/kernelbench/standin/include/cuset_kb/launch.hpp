#pragma once
// `kernel<<<grid, block, shared, stream>>>(args)` reaches the host build rewritten by the splitter
// (cuda_source_split.cpp) as `::cuset_kb::Launch<&kernel>(grid, block, shared, stream)(args)`: the
// launch is recorded with the kernel's name as NVRTC knows it (the template's arguments included)
// and each argument converted to the kernel's parameter type, as a launch converts it.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace cuset_kb {

struct LaunchArg {
  enum class Kind { pointer, integer, unsignedInteger, real, bytes };
  Kind kind = Kind::bytes;
  const void* address = nullptr;     // pointer
  bool readOnly = false;             // pointer to const: the kernel cannot write through it (stream race checks)
  std::vector<unsigned char> bytes;  // every other kind: the value as the kernel receives it
};

// `kernel`: the host-side kernel symbol in the extension's library, which tells the recorder whose
// device code the launch runs (two extensions may define kernels of one name).
void recordLaunch(const char* prettyName, const void* kernel, dim3 grid, dim3 block, std::size_t sharedBytes, cudaStream_t stream,
                  std::vector<LaunchArg> args);

template <class P>
LaunchArg launchArg(const P& value) {
  LaunchArg a;
  if constexpr (std::is_pointer_v<P> || std::is_null_pointer_v<P>) {
    a.kind = LaunchArg::Kind::pointer;
    a.address = reinterpret_cast<const void*>(value);
    if constexpr (std::is_pointer_v<P>) a.readOnly = std::is_const_v<std::remove_pointer_t<P>>;
  } else {
    static_assert(std::is_trivially_copyable_v<P>, "cuset: a kernel argument that is not trivially copyable cannot be recorded");
    a.kind = std::is_floating_point_v<P>                    ? LaunchArg::Kind::real
             : std::is_integral_v<P> && std::is_signed_v<P> ? LaunchArg::Kind::integer
             : std::is_integral_v<P> || std::is_enum_v<P>   ? LaunchArg::Kind::unsignedInteger
                                                            : LaunchArg::Kind::bytes;
    a.bytes.resize(sizeof(P));
    std::memcpy(a.bytes.data(), &value, sizeof(P));
  }
  return a;
}

template <class... P, class... A>
void launchWith(const char* prettyName, dim3 grid, dim3 block, std::size_t shared, cudaStream_t stream, void (*kernel)(P...), A&&... args) {
  static_assert(sizeof...(P) == sizeof...(A), "cuset: the kernel is launched with another number of arguments than it takes");
  // Copy-initialisation: the conversions a call performs (int -> float, T* -> const T*).
  recordLaunch(prettyName, reinterpret_cast<const void*>(kernel), grid, block, shared, stream,
               std::vector<LaunchArg>{launchArg<std::decay_t<P>>(std::forward<A>(args))...});
}

template <auto Kernel>
class Launch {
 public:
  Launch(dim3 grid, dim3 block, std::size_t shared = 0, cudaStream_t stream = nullptr)
      : grid_(grid), block_(block), shared_(shared), stream_(stream) {}
  template <class... A>
  void operator()(A&&... args) const {
    launchWith(name(), grid_, block_, shared_, stream_, Kernel, std::forward<A>(args)...);
  }
  // "... [with auto Kernel = k<float>]": the name expression NVRTC compiles.
  static const char* name() { return __PRETTY_FUNCTION__; }

 private:
  dim3 grid_, block_;
  std::size_t shared_;
  cudaStream_t stream_;
};

}  // namespace cuset_kb
