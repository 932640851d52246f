import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Turns the command line's inputs into the ordered list of files to read: directories are
/// walked recursively in name order (so every run, and every shard, sees the same order),
/// `--glob` filters the files found in directories, `-` is standard input.
enum InputExpander {
    /// One input to read, or one that cannot be read (reported, then skipped).
    enum Entry: Equatable {
        case file(String)
        case standardInput
        case unreadable(path: String, reason: String)
    }

    static func expand(_ arguments: [String], glob: String?) -> [Entry] {
        var entries: [Entry] = []
        for argument in arguments {
            if argument == "-" {
                entries.append(.standardInput)
                continue
            }
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: argument, isDirectory: &isDirectory) else {
                entries.append(.unreadable(path: argument, reason: "no such file or directory"))
                continue
            }
            if isDirectory.boolValue {
                walk(directory: argument, glob: glob, into: &entries)
            } else {
                // Files named on the command line are read whatever --glob says.
                entries.append(.file(argument))
            }
        }
        return entries
    }

    private static func walk(directory: String, glob: String?, into entries: inout [Entry]) {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            entries.append(.unreadable(path: directory, reason: "cannot list the directory"))
            return
        }
        for name in names where !name.hasPrefix(".") {
            let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0 else {
                entries.append(.unreadable(path: path, reason: String(cString: strerror(errno))))
                continue
            }
            var kind = info.st_mode & S_IFMT
            // A link to a file is read; a link to a directory is not followed (no loops).
            if kind == S_IFLNK, stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG { kind = S_IFREG }
            switch kind {
            case S_IFDIR:
                walk(directory: path, glob: glob, into: &entries)
            case S_IFREG:
                if let glob, fnmatch(glob, name, 0) != 0, fnmatch(glob, path, FNM_PATHNAME) != 0 { continue }
                entries.append(.file(path))
            default:
                continue  // sockets, devices, links to directories
            }
        }
    }
}
