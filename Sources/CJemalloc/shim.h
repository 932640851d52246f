// samlgate links jemalloc so that it replaces the C library's malloc in the whole process
// (Swift runtime, NIO, libxml2, OpenSSL): under load the gateway spends a seventh of its CPU in
// glibc's malloc/free. Only the control entry point is declared here (jemalloc.h would repeat
// the C library's malloc declarations); calling it also keeps the linker from dropping the
// library as unused.
#include <stddef.h>

int mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);
