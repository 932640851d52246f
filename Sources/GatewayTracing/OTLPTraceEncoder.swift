/// An OTLP `ExportTraceServiceRequest` in protobuf's wire format, written directly from the
/// finished spans: one resource (the service name and the `OTEL_RESOURCE_ATTRIBUTES`), one
/// instrumentation scope (`samlgate`), the spans.
///
/// The messages and their field numbers are OTLP's (`opentelemetry/proto/trace/v1/trace.proto`,
/// `common/v1/common.proto`, `resource/v1/resource.proto`); only what the gateway's spans carry is
/// written, and fields at their default value are left out, as protobuf's own encoders do.
struct OTLPTraceEncoder {
    /// `Resource.attributes`, kept encoded: they are the same in every export.
    private let resource: [UInt8]

    init(resourceAttributes: [(String, String)]) {
        var writer = ProtobufWriter()
        writer.message(1) { resource in  // ResourceSpans.resource
            for (key, value) in resourceAttributes { resource.keyValue(1, key: key, value: .string(value)) }
        }
        self.resource = writer.bytes
    }

    /// The request body for `spans`.
    func encode(_ spans: some Collection<FinishedSpan>) -> [UInt8] {
        var writer = ProtobufWriter()
        writer.bytes.reserveCapacity(spans.count * 200 + resource.count + 32)
        writer.message(1) { resourceSpans in  // ExportTraceServiceRequest.resource_spans
            resourceSpans.bytes += resource
            resourceSpans.message(2) { scopeSpans in  // ResourceSpans.scope_spans
                scopeSpans.message(1) { $0.string(1, "samlgate") }  // ScopeSpans.scope, InstrumentationScope.name
                for span in spans { scopeSpans.message(2) { Self.write(span, into: &$0) } }  // ScopeSpans.spans
            }
        }
        return writer.bytes
    }

    private static func write(_ span: FinishedSpan, into writer: inout ProtobufWriter) {
        writer.traceID(1, span.traceID)
        writer.fixedBigEndian(2, span.spanID)
        if let state = span.traceState { writer.string(3, state) }
        if span.parentSpanID != 0 { writer.fixedBigEndian(4, span.parentSpanID) }
        writer.string(5, span.name)
        writer.varint(6, span.kind.rawValue)
        writer.fixed64(7, span.start)
        writer.fixed64(8, span.end)
        for (key, value) in span.attributes { writer.keyValue(9, key: key, value: value) }
        // Span.status: Status.code = 2 (error).
        if span.failed { writer.message(15) { $0.varint(3, 2) } }
    }
}

/// Just enough of protobuf's wire format for ``OTLPTraceEncoder``: varints, 64-bit fixed
/// values, length-delimited fields and nested messages.
struct ProtobufWriter {
    var bytes: [UInt8] = []

    private enum WireType: UInt64 {
        case varint = 0
        case fixed64 = 1
        case lengthDelimited = 2
    }

    private mutating func tag(_ field: UInt64, _ type: WireType) {
        rawVarint(field << 3 | type.rawValue)
    }

    private mutating func rawVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func varint(_ field: UInt64, _ value: UInt64) {
        tag(field, .varint)
        rawVarint(value)
    }

    mutating func fixed64(_ field: UInt64, _ value: UInt64) {
        tag(field, .fixed64)
        withUnsafeBytes(of: value.littleEndian) { bytes += $0 }
    }

    mutating func string(_ field: UInt64, _ value: String) {
        tag(field, .lengthDelimited)
        rawVarint(UInt64(value.utf8.count))
        bytes += value.utf8
    }

    /// A `bytes` field of 8 bytes: an id, most significant byte first (as its hex is written).
    mutating func fixedBigEndian(_ field: UInt64, _ value: UInt64) {
        tag(field, .lengthDelimited)
        rawVarint(8)
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }

    /// A `bytes` field of 16 bytes from 32 hex digits.
    mutating func traceID(_ field: UInt64, _ hex: String) {
        tag(field, .lengthDelimited)
        rawVarint(16)
        var high: UInt8? = nil
        for digit in hex.utf8 {
            let nibble = digit <= UInt8(ascii: "9") ? digit &- UInt8(ascii: "0") : (digit | 0x20) &- UInt8(ascii: "a") &+ 10
            if let first = high {
                bytes.append(first << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
    }

    /// A `KeyValue` (key = 1, value = 2: an `AnyValue`, `string_value` = 1 or `int_value` = 3).
    mutating func keyValue(_ field: UInt64, key: String, value: FinishedSpan.Value) {
        message(field) { pair in
            pair.string(1, key)
            pair.message(2) { any in
                switch value {
                case .string(let text): any.string(1, text)
                case .integer(let number): any.varint(3, UInt64(bitPattern: Int64(number)))
                }
            }
        }
    }

    /// A nested message: written in place, then its length put in front of it.
    mutating func message(_ field: UInt64, _ body: (inout ProtobufWriter) -> Void) {
        tag(field, .lengthDelimited)
        let start = bytes.count
        body(&self)
        var length = ProtobufWriter()
        length.rawVarint(UInt64(bytes.count - start))
        bytes.insert(contentsOf: length.bytes, at: start)
    }
}
