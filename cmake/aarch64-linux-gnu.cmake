# Cross build for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu; the
# programs (and so the tests) run under qemu-user. Used by `make test-ports`.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu)
