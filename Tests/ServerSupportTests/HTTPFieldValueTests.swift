import ServerSupport
import Testing

@Suite("Field values read on their bytes")
struct HTTPFieldValueTests {
    @Test("equality ignoring ASCII case and surrounding blanks only")
    func equality() {
        #expect(HTTPFieldValue.equalsIgnoringCase(" \tChunKed\t ", "chunked"))
        #expect(!HTTPFieldValue.equalsIgnoringCase("chunked, gzip", "chunked"))
        #expect(!HTTPFieldValue.equalsIgnoringCase("chun ked", "chunked"))
        // `| 0x20` is applied to letters only: `@` is not a case of `` ` ``, nor NUL of space.
        #expect(!HTTPFieldValue.equalsIgnoringCase("100@continue", "100-continue"))
        #expect(!HTTPFieldValue.equalsIgnoringCase("text/xml\u{0}", "text/xml "))
        #expect(!HTTPFieldValue.equalsIgnoringCase("chunkeD\u{FFFD}", "chunked"))
    }

    @Test("the media type before parameters, and of the first list element when asked")
    func mediaType() {
        #expect(HTTPFieldValue.mediaType(" Application/XML ; q=1, text/html", listElement: true) == "Application/XML")
        #expect(HTTPFieldValue.mediaType("text/xml,application/json", listElement: true) == "text/xml")
        #expect(
            HTTPFieldValue.mediaType("application/x-www-form-urlencoded, text/plain", listElement: false)
                == "application/x-www-form-urlencoded, text/plain")
        #expect(HTTPFieldValue.mediaType("", listElement: true) == "")
    }

    @Test("list elements forwards and backwards, empty ones skipped, stopping when asked")
    func elements() {
        func walk(_ value: String, reversed: Bool, upTo limit: Int = .max) -> [String] {
            var seen: [String] = []
            HTTPFieldValue.forEachElement(of: value, reversed: reversed) {
                seen.append(String($0))
                return seen.count < limit
            }
            return seen
        }
        #expect(walk(" a , ,b,,\tc ", reversed: false) == ["a", "b", "c"])
        #expect(walk(" a , ,b,,\tc ", reversed: true) == ["c", "b", "a"])
        #expect(walk(",,,", reversed: true).isEmpty && walk("", reversed: false).isEmpty)
        #expect(walk("a,b,c,d", reversed: true, upTo: 2) == ["d", "c"])
        #expect(HTTPFieldValue.elementCount(of: ["a,b", " , c"], limit: 10) == 3)
        #expect(HTTPFieldValue.elementCount(of: [String(repeating: "x,", count: 100_000)], limit: 32) == 33)
    }

    @Test("cost stays linear: a megabyte of commas or blanks is walked once")
    func linear() {
        let commas = String(repeating: ",", count: 1 << 20)
        let blanks = String(repeating: " ", count: 1 << 20)
        var count = 0
        for value in [commas, blanks, commas + "a" + blanks] {
            HTTPFieldValue.forEachElement(of: value, reversed: true) { _ in
                count += 1
                return true
            }
            #expect(!HTTPFieldValue.equalsIgnoringCase(value, "chunked"))
        }
        #expect(count == 1)
    }
}
