import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Turns the command line's inputs into the files to read, lazily: directories are walked
/// depth-first in name order (so every run, and every shard, sees the same order) while the
/// reader is already reading, `--glob` filters the files found in directories, `-` is standard
/// input. Walking with `readdir` and its entry types costs no `stat` per file.
struct InputExpander: Sequence, IteratorProtocol {
    /// One input to read, or one that cannot be read (reported, then skipped).
    enum Entry: Equatable {
        case file(String)
        case standardInput
        case unreadable(path: String, reason: String)
    }

    private var arguments: [String]
    private let glob: String?
    /// Directories being walked: their path, sorted entries, and the next one to look at.
    private var stack: [(path: String, names: [(name: String, type: UInt8)], next: Int)] = []

    init(_ arguments: [String], glob: String?) {
        self.arguments = arguments.reversed()
        self.glob = glob
    }

    mutating func next() -> Entry? {
        while true {
            if var top = stack.popLast() {
                guard top.next < top.names.count else { continue }
                let (name, type) = top.names[top.next]
                top.next += 1
                stack.append(top)
                let path = top.path.hasSuffix("/") ? top.path + name : top.path + "/" + name
                switch Self.kind(path: path, type: type) {
                case .directory:
                    if let failure = push(path) { return failure }
                case .file:
                    if let glob, fnmatch(glob, name, 0) != 0, fnmatch(glob, path, FNM_PATHNAME) != 0 { continue }
                    return .file(path)
                case .other:
                    continue  // sockets, devices, links to directories (no loops)
                }
                continue
            }
            guard let argument = arguments.popLast() else { return nil }
            if argument == "-" { return .standardInput }
            var info = stat()
            guard stat(argument, &info) == 0 else {
                return .unreadable(path: argument, reason: String(cString: strerror(errno)).lowercased())
            }
            if info.st_mode & S_IFMT == S_IFDIR {
                if let failure = push(argument) { return failure }
                continue
            }
            // Files named on the command line are read whatever --glob says.
            return .file(argument)
        }
    }

    private enum Kind { case directory, file, other }

    private static func kind(path: String, type: UInt8) -> Kind {
        switch Int32(type) {
        case Int32(DT_DIR): return .directory
        case Int32(DT_REG): return .file
        case Int32(DT_LNK), Int32(DT_UNKNOWN):
            // A link to a file is read; a link to a directory is not followed. File systems that
            // do not report types get a stat.
            var info = stat()
            let found = type == DT_LNK ? stat(path, &info) : lstat(path, &info)
            guard found == 0 else { return .other }
            if info.st_mode & S_IFMT == S_IFREG { return .file }
            return type == DT_UNKNOWN && info.st_mode & S_IFMT == S_IFDIR ? .directory : .other
        default:
            return .other
        }
    }

    /// Starts walking `path`; returns an unreadable entry when it cannot be listed.
    private mutating func push(_ path: String) -> Entry? {
        guard let directory = opendir(path) else {
            return .unreadable(path: path, reason: "cannot list the directory: \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [(name: String, type: UInt8)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name.hasPrefix(".") { continue }  // ".", "..", hidden files
            names.append((name, entry.pointee.d_type))
        }
        names.sort { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        stack.append((path, names, 0))
        return nil
    }
}
