/// Fresh request ids for one client connection: 32 hex digits, a random half drawn once per
/// connection and a counter. Drawing 128 random bits per request cost a `getrandom` system call
/// each; ids only have to be unique and carry nothing about the request.
struct RequestIDSequence {
    private let prefix = UInt64.random(in: .min ... .max)
    private var counter: UInt64 = 0

    mutating func next() -> String {
        counter &+= 1
        return RequestID.hex(prefix, counter)
    }
}
