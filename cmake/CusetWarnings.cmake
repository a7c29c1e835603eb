add_library(cuset_warnings INTERFACE)
target_compile_options(cuset_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                       -Wno-missing-field-initializers)
