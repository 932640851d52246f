import Foundation
import ServerSupport

#if canImport(Glibc)
import Glibc
#endif

/// Turns the command line's inputs into the files to read, lazily: directories are walked
/// depth-first in name order (so every run, and every shard, sees the same order) while the
/// reader is already reading, `--glob` filters the files found in directories, `-` is standard
/// input. Walking with `readdir` and its entry types costs no `stat` per file.
///
/// Nothing found in a directory is passed over in silence: an entry that is not a regular file
/// (or a link to one) is reported, as unreadable when it cannot be opened (a dangling link, a
/// link loop), as skipped when reading it makes no sense or could hang (a FIFO, socket or
/// device) or would walk outside the tree or in circles (a link to a directory). Only hidden
/// entries and the names `--glob` filters out are left alone, as documented.
struct InputExpander: Sequence, IteratorProtocol {
    /// One input to read, or one that cannot or will not be read (reported, then skipped).
    enum Entry: Equatable {
        /// A file; `inDirectory` when it was found in a directory rather than named.
        case file(RawPath, inDirectory: Bool)
        case standardInput
        case unreadable(path: RawPath, reason: String)
        case skipped(path: RawPath, reason: String)
    }

    private var arguments: [RawPath]
    private let glob: String?
    /// Directories being walked: their path, sorted entries, and the next one to look at.
    private var stack: [(path: RawPath, names: [(name: [UInt8], type: UInt8)], next: Int)] = []

    init(_ arguments: [RawPath], glob: String?) {
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
                let path = top.path.appending(name)
                let kind = Self.kind(path: path, type: type)
                if case .directory = kind {
                    if let failure = push(path) { return failure }
                    continue
                }
                if let glob, !Self.matches(glob, name: name, path: path) { continue }
                switch kind {
                case .directory: continue
                case .file: return .file(path, inDirectory: true)
                case .unreadable(let reason): return .unreadable(path: path, reason: reason)
                case .skipped(let reason): return .skipped(path: path, reason: reason)
                }
            }
            guard let argument = arguments.popLast() else { return nil }
            if argument.bytes == [UInt8(ascii: "-")] { return .standardInput }
            var info = stat()
            guard argument.withCString({ stat($0, &info) }) == 0 else {
                return .unreadable(path: argument, reason: String(cString: strerror(errno)).lowercased())
            }
            if info.st_mode & S_IFMT == S_IFDIR {
                if let failure = push(argument) { return failure }
                continue
            }
            // Files named on the command line are read whatever --glob says, FIFOs included
            // (`<(zcat …)` is one).
            return .file(argument, inDirectory: false)
        }
    }

    private enum Kind {
        case directory, file
        case unreadable(String)
        case skipped(String)
    }

    private static func matches(_ glob: String, name: [UInt8], path: RawPath) -> Bool {
        let byName = (name + [0]).withUnsafeBufferPointer { name in
            name.withMemoryRebound(to: CChar.self) { fnmatch(glob, $0.baseAddress!, 0) == 0 }
        }
        return byName || path.withCString { fnmatch(glob, $0, FNM_PATHNAME) == 0 }
    }

    private static func kind(path: RawPath, type: UInt8) -> Kind {
        var type = Int32(type)
        if type == Int32(DT_UNKNOWN) {
            // File systems that do not report types get an lstat.
            var info = stat()
            guard path.withCString({ lstat($0, &info) }) == 0 else { return .unreadable(String(cString: strerror(errno)).lowercased()) }
            type = Self.direntType(info.st_mode)
        }
        switch type {
        case Int32(DT_DIR): return .directory
        case Int32(DT_REG): return .file
        case Int32(DT_LNK):
            // A link to a file is read; a link to a directory is not followed (no loops, no
            // walking out of the tree).
            var info = stat()
            guard path.withCString({ stat($0, &info) }) == 0 else {
                switch errno {
                case ENOENT: return .unreadable("a symbolic link to nothing (dangling)")
                case ELOOP: return .unreadable("a symbolic link loop")
                default: return .unreadable(String(cString: strerror(errno)).lowercased())
                }
            }
            switch Self.direntType(info.st_mode) {
            case Int32(DT_REG): return .file
            case Int32(DT_DIR): return .skipped("a symbolic link to a directory (not followed)")
            case let other: return .skipped("a symbolic link to \(Self.describe(other)) (not read)")
            }
        default:
            return .skipped("\(Self.describe(type)) (not read)")
        }
    }

    private static func direntType(_ mode: mode_t) -> Int32 {
        switch mode & S_IFMT {
        case S_IFDIR: Int32(DT_DIR)
        case S_IFREG: Int32(DT_REG)
        case S_IFLNK: Int32(DT_LNK)
        case S_IFIFO: Int32(DT_FIFO)
        case S_IFSOCK: Int32(DT_SOCK)
        case S_IFCHR: Int32(DT_CHR)
        case S_IFBLK: Int32(DT_BLK)
        default: Int32(DT_UNKNOWN)
        }
    }

    private static func describe(_ type: Int32) -> String {
        switch type {
        case Int32(DT_FIFO): "a FIFO (named pipe)"
        case Int32(DT_SOCK): "a socket"
        case Int32(DT_CHR), Int32(DT_BLK): "a device"
        default: "a file of unknown type"
        }
    }

    /// Starts walking `path`; returns an unreadable entry when it cannot be listed.
    private mutating func push(_ path: RawPath) -> Entry? {
        guard let directory = path.withCString({ opendir($0) }) else {
            return .unreadable(path: path, reason: "cannot list the directory: \(String(cString: strerror(errno)))")
        }
        defer { closedir(directory) }
        var names: [(name: [UInt8], type: UInt8)] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                Array(raw.prefix { $0 != 0 })
            }
            if name.first == UInt8(ascii: ".") { continue }  // ".", "..", hidden files
            names.append((name, entry.pointee.d_type))
        }
        names.sort { $0.name.lexicographicallyPrecedes($1.name) }
        stack.append((path, names, 0))
        return nil
    }
}
