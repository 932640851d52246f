import Logging
import ServerSupport

#if !SAMLGATE_NO_JEMALLOC
import CJemalloc
#endif

#if canImport(Glibc)
import Glibc
#endif

/// The lines `serve` and `upstream` write themselves rather than through swift-log: the start-up
/// line (standard output, where supervisors and tests read the port) and the error that ends
/// the process (standard error), including configuration errors found before the logger exists.
///
/// In the json log format they are objects shaped like the log lines (`ts`, `level`, `label`,
/// `msg`, then fields), so a collector parsing every line of a json-format server never meets
/// plain text; in the text format they are the plain lines. Usage errors that ArgumentParser
/// reports (an unknown flag) come before any format is known and stay plain.
struct ServerConsole {
    /// The json log format (otherwise text).
    let json: Bool
    /// The server's swift-log label (`samlgate.gateway`, `samlgate.upstream`).
    let label: String
    /// What starts a plain-text error line (`samlgate: serve`, `samlgate upstream`).
    let command: String

    /// The start-up line: `text`, or a `notice` object with message `listening` and `fields`.
    func listening(_ text: String, fields: Logger.Metadata) {
        if json {
            JSONLogHandler.write(JSONLogHandler.line(label: label, level: .notice, message: "listening", metadata: fields), to: 1)
        } else {
            StandardStreams.write(text + "\n")
        }
    }

    /// The error that ends the process: `<command>: <message>` (escaped: it may quote a Redis or
    /// upstream error text), or a `critical` object.
    func fail(_ message: String) {
        if json {
            JSONLogHandler.write(JSONLogHandler.line(label: label, level: .critical, message: message, metadata: [:]), to: 2)
        } else {
            StandardStreams.writeError("\(command): \(DisplayText.escape(message))\n")
        }
    }
}

// MARK: - The allocator

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
