import FuzzSupport
@_spi(Fuzzing) import SAMLVerification

/// Target `canonicalization`.
///
/// Invariant: on any document and any node-set shape a SAML signature can produce (an element's
/// subtree, optionally minus one child element's subtree), samlgate's native exclusive
/// canonicalizer either declines (libxml2 is then used) or produces output byte-identical to
/// libxml2's exclusive C14N — with and without comments, with and without an
/// `InclusiveNamespaces` prefix list — and it never succeeds where libxml2 fails. xmlsec's node
/// set for the shape must be recognised as that shape. Where the bytes agree, hashing them while
/// they are written (the verifier's digest path, through a window small enough that every kind
/// of write is split) must give libxml2's bytes' SHA-256. Anything else aborts.
///
/// Input: a 4-byte header choosing the shape, then the document.
///   byte 0: the apex (element number, document order, modulo the element count)
///   byte 1: 0 = nothing excluded, n = the apex's child element n-1 (modulo its child count)
///   byte 2: the prefix list: 0 ["xs"], 1 ["xs","saml","xsi"], 2 ["r","q","unbound"], 3 ["#default"],
///           4…7 the document's own declared prefixes picked by the bits of byte 3; +8 adds "xml",
///           +16 adds "" (an empty prefix)
///   byte 3: the bit mask for 4…7
/// Each input is compared four times: comments off/on × no prefix list/the chosen one.
@main
enum CanonicalizationTarget {
    static func main() {
        FuzzDriver.run { data, size in CanonicalizationTarget.testOne(data, size) }
    }

    nonisolated(unsafe) static var differential = CanonicalizationDifferential()

    static let fixedLists: [[String]] = [["xs"], ["xs", "saml", "xsi"], ["r", "q", "unbound"], ["#default"]]

    static func testOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let input = FuzzDriver.input(data, size)
        guard input.count > 4 else { return 0 }
        let header = UnsafeRawBufferPointer(rebasing: input[..<4])
        let document = UnsafeRawBufferPointer(rebasing: input[4...])
        var list: [String]
        let selector = Int(header[2] & 7)
        if selector < fixedLists.count {
            list = fixedLists[selector]
        } else {
            let declared = differential.declaredPrefixes(document)
            list = declared.enumerated().filter { header[3] & (1 << ($0.offset % 8)) != 0 }.map(\.element)
        }
        if header[2] & 8 != 0 { list.append("xml") }
        if header[2] & 16 != 0 { list.append("") }
        let apex = Int(header[0])
        let excluded = header[1] == 0 ? nil : Int(header[1]) - 1
        var shapes: [CanonicalizationDifferential.Shape] = []
        for withComments in [false, true] {
            for prefixes in [nil, list] {
                shapes.append(.init(apex: apex, excluded: excluded, withComments: withComments, prefixes: prefixes))
            }
        }
        for (shape, outcome) in zip(shapes, differential.compare(document, shapes: shapes)) {
            switch outcome {
            case .notParsed, .declined, .identical:
                continue
            case .differs(let native, let libxml2):
                FuzzFailure.violated(
                    "native C14N differs from libxml2 (\(native) vs \(libxml2) bytes; comments \(shape.withComments), prefix list \(shape.prefixes.map { "\($0.count) entries" } ?? "none"))"
                )
            case .libxml2Failed:
                FuzzFailure.violated("native C14N succeeded where libxml2 failed (comments \(shape.withComments))")
            case .shapeNotRecognised:
                FuzzFailure.violated("xmlsec's node set not recognised as the shape it was built from")
            case .digestDiffers:
                FuzzFailure.violated("the same bytes hashed while written give another SHA-256 (comments \(shape.withComments))")
            }
        }
        return 0
    }
}
