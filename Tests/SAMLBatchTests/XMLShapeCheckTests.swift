import Testing

@testable import SAMLBatch

/// The encode-only well-formedness screen must pass every well-formed document (a false alarm
/// loses a capture) and catch the usual breakage.
@Suite("XML shape screen")
struct XMLShapeCheckTests {
    static func check(_ text: String) -> String? {
        var shape = XMLShapeCheck()
        let bytes = Array(text.utf8)
        var code: String?
        bytes.withUnsafeBytes { buffer in
            do throws(RecordError) {
                try shape.check(buffer)
            } catch {
                code = error.code.rawValue
            }
        }
        return code
    }

    @Test(
        "well-formed documents pass",
        arguments: [
            "<a/>",
            "<?xml version=\"1.0\"?>\n<a>text</a>\n",
            "\u{FEFF}<a></a>",
            "<!-- before --><a><!-- <b> inside --></a><!-- after -->",
            "<a><![CDATA[ <not> </a> ]]></a>",
            "<!DOCTYPE a [ <!ELEMENT a (#PCDATA)> <!ENTITY x \"]>\"> ]><a>&x;</a>",
            "<a x='1' y=\"a>b\" z = \"/\"><b/><c  ></c ></a>",
            "<p:a xmlns:p=\"urn:x\"><p:b>1 &lt; 2 > 0</p:b></p:a>",
            "<a>\u{00A0}</a>\u{3000}\n",
            "<?pi <stuff>?><a><?inner ?></a>",
        ])
    func passes(_ text: String) {
        #expect(Self.check(text) == nil)
    }

    @Test(
        "broken documents are malformed_xml",
        arguments: [
            "", "   ", "text", "<a>", "<a><b></a>", "<a></b>", "<a/><b/>", "<a/>tail", "lead<a/>",
            "<a x=\"1></a>", "<a x=1></a>", "<a", "<a><!-- open </a>", "<a><![CDATA[ open </a>", "</a>",
            "<?xml version=\"1.0\"?", "<a></a", "<>",
        ])
    func fails(_ text: String) {
        #expect(Self.check(text) == "malformed_xml")
    }
}
