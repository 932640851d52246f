import Foundation

/// The validators of a cached copy (`ETag`, `Last-Modified`), sent back as `If-None-Match` and
/// `If-Modified-Since` so that an unchanged source answers `304` with no body.
///
/// Kept in a file beside the copy (`metadata.xml.validators`), so a restarted gateway asks
/// conditionally too, and only when the copy it describes exists.
struct MetadataValidators: Equatable, Sendable {
    var etag: String?
    var lastModified: String?

    static func path(for copy: String) -> String { copy + ".validators" }

    /// The validators stored for the copy at `copy`; empty when either file is missing.
    static func read(for copy: String) -> MetadataValidators {
        let fm = FileManager.default
        guard fm.fileExists(atPath: copy), let data = fm.contents(atPath: path(for: copy)),
            let text = String(data: data, encoding: .utf8)
        else { return MetadataValidators() }
        var validators = MetadataValidators()
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !value.isEmpty else { continue }
            switch line[..<colon].lowercased() {
            case "etag": validators.etag = value
            case "last-modified": validators.lastModified = value
            default: continue
            }
        }
        return validators
    }

    /// The file's text.
    var text: String {
        (etag.map { "ETag: \($0)\n" } ?? "") + (lastModified.map { "Last-Modified: \($0)\n" } ?? "")
    }

    /// A header value goes back to the source verbatim: one without control characters only.
    static func usable(_ value: String?) -> String? {
        guard let value, !value.isEmpty, value.count <= 1024,
            value.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7F })
        else { return nil }
        return value
    }
}
