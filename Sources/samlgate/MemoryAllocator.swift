#if !SAMLGATE_NO_JEMALLOC
import CJemalloc
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The process's memory allocator. samlgate links jemalloc in place of glibc's malloc: under
/// `make load` it cut the gateway's CPU per exchange by about 13 % (glibc's `_int_malloc`,
/// `malloc_consolidate` and heap trimming were a seventh of the profile). The servers name it
/// in their start-up line, so an operator can see which allocator a binary really runs with.
enum MemoryAllocator {
    /// `jemalloc <version>` when the process's `malloc` is jemalloc's, otherwise `libc`
    /// (another allocator took precedence, e.g. through `LD_PRELOAD`).
    static var description: String {
        #if SAMLGATE_NO_JEMALLOC
        return "libc (built without jemalloc)"
        #else
        guard let library = dlopen("libjemalloc.so.2", RTLD_NOW | RTLD_NOLOAD) else { return "libc" }
        defer { dlclose(library) }
        guard let own = dlsym(library, "malloc"), let current = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc"),
            own == current, let version = string("version")
        else { return "libc" }
        return "jemalloc " + version
        #endif
    }

    #if !SAMLGATE_NO_JEMALLOC
    private static func string(_ name: String) -> String? {
        var value: UnsafePointer<CChar>?
        var length = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl(name, &value, &length, nil, 0) == 0, let value else { return nil }
        return String(cString: value)
    }
    #endif
}
