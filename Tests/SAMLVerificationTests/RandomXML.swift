import CLITestSupport

/// Random well-formed documents for comparing canonicalizers: a few prefixes bound (and
/// rebound deeper down) to a few URIs, default namespaces set and undeclared, namespaced and
/// plain attributes in random order, text with every character C14N escapes, comments,
/// processing instructions and CDATA sections.
enum RandomXML {
    static let prefixes = ["a", "b", "xs", "saml", "q"]
    static let uris = ["urn:one", "urn:two", "http://example.com/three", "http://www.w3.org/2001/XMLSchema", "urn:oasis:names:tc:SAML:2.0:assertion"]
    static let names = ["e", "f", "Assertion", "g1", "h-2", "i.3"]
    static let texts = ["plain", " a &amp; b ", "&lt;tag&gt;", "x > y", "\"q\" 'a'", "&#13;cr", "&#9;tab&#10;lf", "ü€", "  ", "]]&gt;"]

    static func document(_ random: inout SeededGenerator) -> String {
        var out = ""
        element(&random, depth: 0, bound: [], out: &out)
        return out
    }

    private static func pick<T>(_ list: [T], _ random: inout SeededGenerator) -> T {
        list[Int(random.next() % UInt64(list.count))]
    }

    private static func chance(_ percent: UInt64, _ random: inout SeededGenerator) -> Bool {
        random.next() % 100 < percent
    }

    /// `bound`: prefixes declared on an ancestor (so they may be used here).
    private static func element(_ random: inout SeededGenerator, depth: Int, bound: Set<String>, out: inout String) {
        var scope = bound
        var declarations = ""
        for prefix in prefixes where chance(depth == 0 ? 60 : 15, &random) {
            declarations += " xmlns:\(prefix)=\"\(pick(uris, &random))\""
            scope.insert(prefix)
        }
        if chance(20, &random) {
            declarations += chance(30, &random) ? " xmlns=\"\"" : " xmlns=\"\(pick(uris, &random))\""
        }
        let qualified = !scope.isEmpty && chance(70, &random)
        let name = (qualified ? pick(Array(scope).sorted(), &random) + ":" : "") + pick(names, &random)
        var attributes = ""
        var used = Set<String>()
        for _ in 0..<Int(random.next() % 4) {
            let prefix = !scope.isEmpty && chance(50, &random) ? pick(Array(scope).sorted(), &random) : ""
            let local = pick(["id", "x", "Version", "type", "z"], &random)
            // Two prefixes may share a URI; keep expanded names unique by one attribute per local name.
            guard !used.contains(local) else { continue }
            used.insert(local)
            attributes += " \(prefix.isEmpty ? "" : prefix + ":")\(local)=\"\(attributeValue(&random))\""
        }
        out += "<\(name)\(declarations)\(attributes)>"
        if depth < 4 {
            for _ in 0..<Int(random.next() % 4) {
                switch random.next() % 8 {
                case 0, 1, 2: element(&random, depth: depth + 1, bound: scope, out: &out)
                case 3: out += "<!-- \(pick(["c", "-x-", "a<b"], &random)) -->"
                case 4: out += "<?pi\(pick(["", " data", " a?b"], &random))?>"
                case 5: out += "<![CDATA[\(pick(["x<y", "&amp;", "]]"], &random))]]>"
                default: out += pick(texts, &random)
                }
            }
        }
        out += "</\(name)>"
    }

    private static func attributeValue(_ random: inout SeededGenerator) -> String {
        pick(["v", "a &amp; b", "&lt;x&gt;", "&quot;q&quot;", "'s'", "&#9;&#10;&#13;", "line\nbreak", "ü", ""], &random)
    }
}
