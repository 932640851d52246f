/// A corpus file that cannot be read as its manifest says.
struct CorpusError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) { self.description = description }
}
