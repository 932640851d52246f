/// The spans of one OTLP/HTTP protobuf export (`ExportTraceServiceRequest`), read with just
/// enough of protobuf's wire format to check what the gateway exported: the test's receiver,
/// written from the OTLP protocol's field numbers, independent of the exporter's code.
struct OTLPExport {
    struct Span {
        var traceID = ""
        var spanID = ""
        var parentSpanID = ""
        /// The W3C `tracestate` the span carries; empty when none.
        var traceState = ""
        var name = ""
        /// OTLP's `SpanKind`: 1 internal, 2 server.
        var kind = 0
        var start: UInt64 = 0
        var end: UInt64 = 0
        /// Every attribute, its value as text whatever its type.
        var attributes: [String: String] = [:]
        /// The attributes exported as integers (`AnyValue.int_value`), and only those.
        var intAttributes: [String: Int64] = [:]
        /// OTLP's `Status.code`: 0 unset, 2 error.
        var statusCode = 0
    }

    struct Malformed: Error {}

    var spans: [Span] = []
    var resourceAttributes: [String: String] = [:]

    init(_ bytes: [UInt8]) throws {
        // ExportTraceServiceRequest.resource_spans = 1
        for case (1, .bytes(let resourceSpans)) in try Self.fields(bytes[...]) {
            for field in try Self.fields(resourceSpans) {
                switch field {
                case (1, .bytes(let resource)):  // Resource.attributes = 1
                    for case (1, .bytes(let pair)) in try Self.fields(resource) {
                        let attribute = try Self.keyValue(pair)
                        resourceAttributes[attribute.key] = attribute.text
                    }
                case (2, .bytes(let scopeSpans)):  // ScopeSpans.spans = 2
                    for case (2, .bytes(let span)) in try Self.fields(scopeSpans) { spans.append(try Self.span(span)) }
                default: break
                }
            }
        }
    }

    private static func span(_ bytes: ArraySlice<UInt8>) throws -> Span {
        var span = Span()
        for field in try fields(bytes) {
            switch field {
            case (1, .bytes(let id)): span.traceID = hex(id)
            case (2, .bytes(let id)): span.spanID = hex(id)
            case (3, .bytes(let state)): span.traceState = String(decoding: state, as: UTF8.self)
            case (4, .bytes(let id)): span.parentSpanID = hex(id)
            case (5, .bytes(let name)): span.name = String(decoding: name, as: UTF8.self)
            case (6, .varint(let kind)): span.kind = Int(kind)
            case (7, .fixed64(let time)): span.start = time
            case (8, .fixed64(let time)): span.end = time
            case (9, .bytes(let pair)):
                let attribute = try keyValue(pair)
                span.attributes[attribute.key] = attribute.text
                if let integer = attribute.integer { span.intAttributes[attribute.key] = integer }
            case (15, .bytes(let status)):  // Status.code = 3
                for case (3, .varint(let code)) in try fields(status) { span.statusCode = Int(code) }
            default: break
            }
        }
        return span
    }

    /// A `KeyValue` (key = 1, value = 2: an `AnyValue`), its value as text, and as an integer
    /// when it is one (`AnyValue.int_value` = 3).
    private static func keyValue(_ bytes: ArraySlice<UInt8>) throws -> (key: String, text: String, integer: Int64?) {
        var key = "", value = ""
        var integer: Int64?
        for field in try fields(bytes) {
            switch field {
            case (1, .bytes(let text)): key = String(decoding: text, as: UTF8.self)
            case (2, .bytes(let any)):
                for inner in try fields(any) {
                    switch inner {
                    case (1, .bytes(let text)): value = String(decoding: text, as: UTF8.self)
                    case (2, .varint(let flag)): value = flag == 0 ? "false" : "true"
                    case (3, .varint(let number)):
                        integer = Int64(bitPattern: number)
                        value = String(Int64(bitPattern: number))
                    case (4, .fixed64(let bits)): value = String(Double(bitPattern: bits))
                    default: break
                    }
                }
            default: break
            }
        }
        return (key, value, integer)
    }

    enum Value {
        case varint(UInt64)
        case fixed64(UInt64)
        case fixed32(UInt32)
        case bytes(ArraySlice<UInt8>)
    }

    /// The fields of one message, in order.
    private static func fields(_ message: ArraySlice<UInt8>) throws -> [(Int, Value)] {
        var bytes = message
        var fields: [(Int, Value)] = []
        func varint() throws -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while let byte = bytes.popFirst() {
                guard shift < 64 else { throw Malformed() }
                result |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return result }
                shift += 7
            }
            throw Malformed()
        }
        func fixed(_ count: Int) throws -> UInt64 {
            guard bytes.count >= count else { throw Malformed() }
            let value = bytes.prefix(count).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            bytes = bytes.dropFirst(count)
            return value
        }
        while !bytes.isEmpty {
            let tag = try varint()
            let number = Int(tag >> 3)
            switch tag & 7 {
            case 0: fields.append((number, .varint(try varint())))
            case 1: fields.append((number, .fixed64(try fixed(8))))
            case 5: fields.append((number, .fixed32(UInt32(try fixed(4)))))
            case 2:
                let length = Int(try varint())
                guard length <= bytes.count else { throw Malformed() }
                fields.append((number, .bytes(bytes.prefix(length))))
                bytes = bytes.dropFirst(length)
            default: throw Malformed()
            }
        }
        return fields
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
