extension PartnerFrameworkStatus {
    /// `frameworkProviderInfo.expirationDate`: milliseconds since the Unix epoch, documented as a
    /// string of decimal digits (`"1735689600000"`). A JSON number is read too, as older
    /// documentation gave it, if it is a whole number below 10^15; anything else (a fraction, a
    /// sign, an exponent in a string, a date text, a number past the string form's 15 digits) is
    /// not an expiration date and makes the header unreadable.
    public struct ExpirationDate: Codable, Sendable, Equatable {
        public var milliseconds: Double
        /// Written back as it came: a string, or a number.
        public var isString: Bool

        public init(milliseconds: Double, isString: Bool = true) {
            self.milliseconds = milliseconds
            self.isString = isString
        }

        /// At most 15 digits: past year 30,000 a date is not a date, and every 15-digit number is
        /// exact in a `Double` (below 2^53), so the value reads back as it was written.
        static let maximumDigits = 15

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                guard !text.isEmpty, text.utf8.count <= Self.maximumDigits,
                    text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }), let value = Double(text)
                else {
                    throw DecodingError.dataCorruptedError(
                        in: container, debugDescription: "expirationDate must be a string of decimal milliseconds")
                }
                self.init(milliseconds: value, isString: true)
                return
            }
            // A number: a whole number of milliseconds below 10^15, as the string form.
            let number = try container.decode(Double.self)
            guard number.isFinite, number >= 0, number < 1e15, number.rounded(.towardZero) == number else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "expirationDate must be a whole number of milliseconds below 10^15")
            }
            self.init(milliseconds: number, isString: false)
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            if isString {
                try container.encode(String(Int64(milliseconds)))
            } else {
                try container.encode(milliseconds)
            }
        }
    }
}
