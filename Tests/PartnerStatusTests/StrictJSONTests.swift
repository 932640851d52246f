import PartnerStatus
import Testing

/// The duplicate-key scanner the partner status passes before Foundation decodes it.
@Suite("Strict JSON")
struct StrictJSONTests {
    static func refusal(_ text: String) -> String? {
        do {
            try StrictJSON.check(Array(text.utf8))
            return nil
        } catch {
            return error.reason
        }
    }

    @Test("well-formed JSON passes: nesting, arrays, numbers, literals, escapes, the same key in sibling objects")
    func accepted() {
        for text in [
            #"{"frameworkPermissionInfo":{"accessStatus":"granted"},"frameworkProviderInfo":{"id":"x","expirationDate":1.7e12}}"#,
            #" {"a":[1,-0.5,2E+3,true,false,null,{"a":1},{"a":2}],"b":{"a":{"a":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}}} "#,
            #"{}"#, #"[]"#, #""x""#, #"0"#, #"{"":1,"\u0000":2}"#, #"{"id":1,"i d":3,"id ":4}"#,
        ] {
            #expect(Self.refusal(text) == nil, "\(text)")
        }
    }

    @Test("a repeated key is refused at any depth, also when one copy is escaped")
    func duplicates() {
        for text in [
            #"{"frameworkProviderInfo":{"id":"PickerCable"},"frameworkProviderInfo":{"id":"Cablevision"}}"#,
            #"{"a":{"id":"x","id":"y"}}"#,
            #"{"a":[{"b":{"c":[{"id":1,"i\u0064":2}]}}]}"#,
            #"{"frameworkProviderInf\u006f":1,"frameworkProviderInfo":2}"#,
            #"{"\/":1,"/":2}"#,
        ] {
            #expect(Self.refusal(text) == "a JSON object repeats a key", "\(text)")
        }
    }

    @Test("keys equal but for ASCII case are one key, at any depth, also when one copy is escaped")
    func caseFoldedDuplicates() {
        for text in [
            #"{"frameworkProviderInfo":{"id":"Cablevision","ID":"PickerCable"}}"#,
            #"{"frameworkProviderInfo":{"id":"x"},"FrameworkProviderInfo":{"id":"y"}}"#,
            #"{"a":[{"b":{"Id":1,"i\u0044":2}}]}"#,
            #"{"accessStatus":"granted","ACCESSSTATUS":"denied"}"#,
        ] {
            #expect(Self.refusal(text) == "a JSON object repeats a key", "\(text)")
        }
        // Case folding is ASCII's only: `[` and `{` differ from `{` and `[` by 0x20 too.
        #expect(Self.refusal(#"{"a[":1,"a{":2,"@":3,"`":4}"#) == nil)
    }

    @Test("a key outside ASCII is refused: binders fold some onto ASCII letters (ſ, K, ı, full-width forms)")
    func nonASCIIKeys() {
        for text in [
            #"{"\u00e9":1,"é":2}"#, #"{"\ud83d\ude00":1}"#, #"{"ſtatus":1}"#, #"{"\u017ftatus":1}"#, #"{"\u212a":1}"#,
            #"{"ıd":"x"}"#, #"{"ｉｄ":"x"}"#, #"{"a":{"b":[{"idé":1}]}}"#,
        ] {
            #expect(Self.refusal(text) == "a JSON key holds a character outside ASCII", "\(text)")
        }
        // Values may hold any character.
        #expect(Self.refusal(#"{"message":"ſ K ı ｉｄ é 😀"}"#) == nil)
    }

    @Test("lone surrogates, bytes that are not UTF-8, and nesting past the limit are refused")
    func ambiguous() {
        #expect(Self.refusal(#"{"\ud800":1}"#) == "JSON with a lone surrogate escape")
        #expect(Self.refusal(#"{"\udc00":1}"#) == "JSON with a lone surrogate escape")
        #expect(Self.refusal(#"{"a":"\ud800\u0041"}"#) == "JSON with a lone surrogate escape")
        #expect(Self.refusal(#"{"a":"\ud800"}"#) == "JSON with a lone surrogate escape")
        do {
            try StrictJSON.check([UInt8](#"{"a":"#.utf8) + [0xFF, 0x22, 0x7D])
            Issue.record("accepted bytes that are not UTF-8")
        } catch {
            #expect(error.reason == "JSON that is not UTF-8")
        }
        let limit = StrictJSON.maximumDepth
        #expect(Self.refusal(String(repeating: "[", count: limit) + String(repeating: "]", count: limit)) == nil)
        #expect(
            Self.refusal(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
                == "JSON nested deeper than \(limit) levels")
        #expect(
            Self.refusal(String(repeating: "{\"a\":", count: limit + 1) + "1" + String(repeating: "}", count: limit + 1))
                == "JSON nested deeper than \(limit) levels")
        // Deep enough to overflow an unbounded recursion: refused at the limit, no crash.
        #expect(Self.refusal(String(repeating: "[", count: StrictJSON.maximumSize)) != nil)
        #expect(Self.refusal("[" + String(repeating: " ", count: StrictJSON.maximumSize) + "]") == "JSON larger than \(StrictJSON.maximumSize) bytes")
    }

    @Test(
        "garbage is refused, never crashes",
        arguments: [
            "", " ", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "[1,]", "[1 2]", "{\"a\":1}x", "{'a':1}", "{a:1}", "01", "1.", "-",
            "1e", ".5", "+1", "tru", "nul", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\u12G4\"", "\"a\nb\"", "\"\\", "NaN", "{\"a\":1}{}",
            "\u{0}", "[\"\\ud83d\\u0000\"]",
        ])
    func garbage(_ text: String) {
        #expect(Self.refusal(text) != nil, "\(text.debugDescription)")
    }

    @Test("cost stays linear: an object of many distinct keys and a long run of duplicates after one")
    func linear() {
        var wide = "{"
        var index = 0
        while wide.utf8.count < StrictJSON.maximumSize - 32 {
            wide += "\"k\(index)\":0,"
            index += 1
        }
        wide += "\"last\":0}"
        #expect(Self.refusal(wide) == nil)
        #expect(Self.refusal(wide.replacingOccurrences(of: "\"last\"", with: "\"k0\"")) == "a JSON object repeats a key")
    }
}
