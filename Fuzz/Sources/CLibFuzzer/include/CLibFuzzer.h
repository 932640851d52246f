#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H

#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (libclang_rt.fuzzer, linked by -sanitize=fuzzer). SwiftPM links an
/// executable target with its own entry point (`<Module>_main`), so libFuzzer's `main` is never
/// used: each target's `@main` hands its arguments and input callback to this driver instead.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
