import CLITestSupport

/// Builds random strings from the pieces the cookbook treats specially, so the oracle comparison
/// exercises every branch: all 26 whitespace/newline scalars, their near neighbours that are *not*
/// whitespace, multi-byte characters, controls, and XML-looking text.
enum TrickyInput {
    /// Every scalar in `whitespacesAndNewlines`, plus U+0020/U+0009 twice for weight.
    static let whitespace: [Unicode.Scalar] = [
        "\u{09}", "\u{0A}", "\u{0B}", "\u{0C}", "\u{0D}", "\u{20}", "\u{85}", "\u{A0}", "\u{1680}",
        "\u{2000}", "\u{2001}", "\u{2002}", "\u{2003}", "\u{2004}", "\u{2005}", "\u{2006}", "\u{2007}",
        "\u{2008}", "\u{2009}", "\u{200A}", "\u{200B}", "\u{2028}", "\u{2029}", "\u{202F}", "\u{205F}",
        "\u{3000}", " ", " ", "\t", "\t",
    ]
    /// Look-alikes that are content: BOM, MVS, ZWNJ, ZWJ, WJ, SHY, NUL, DEL, other controls, and
    /// scalars whose UTF-8 shares lead bytes with the whitespace ones.
    static let nearMisses: [Unicode.Scalar] = [
        "\u{FEFF}", "\u{180E}", "\u{200C}", "\u{200D}", "\u{2060}", "\u{AD}", "\u{00}", "\u{7F}",
        "\u{01}", "\u{1F}", "\u{84}", "\u{86}", "\u{A1}", "\u{1681}", "\u{200F}", "\u{2027}",
        "\u{202A}", "\u{202E}", "\u{2030}", "\u{205E}", "\u{2060}", "\u{3001}", "\u{301}",
    ]
    static let multiByte: [Unicode.Scalar] = ["é", "ß", "€", "中", "😀", "𝄞", "\u{10FFFF}", "ü", "Ω"]
    static let xmlPieces = [
        "<saml:Assertion ID=\"_a1\">", "</saml:Assertion>", "<ds:SignatureValue>", "Zm9vYmFy+/=",
        "alice@example.com", "<!-- c -->", "&amp;", "\r\n", "  ", "\t\t", "!*'();:@&=+$,/?%#[]",
        "<?xml version=\"1.0\"?>", "a \n b", "x\u{301}",
    ]

    static func make(using rng: inout SeededGenerator, maxPieces: Int = 40) -> String {
        var s = String.UnicodeScalarView()
        let n = Int.random(in: 0...maxPieces, using: &rng)
        for _ in 0..<n {
            switch Int.random(in: 0..<10, using: &rng) {
            case 0...2: s.append(whitespace.randomElement(using: &rng)!)
            case 3: s.append(nearMisses.randomElement(using: &rng)!)
            case 4: s.append(multiByte.randomElement(using: &rng)!)
            case 5...6: s.append(contentsOf: xmlPieces.randomElement(using: &rng)!.unicodeScalars)
            default:
                let ascii = UInt8.random(in: 0x20...0x7E, using: &rng)
                s.append(Unicode.Scalar(ascii))
            }
        }
        return String(s)
    }
}
