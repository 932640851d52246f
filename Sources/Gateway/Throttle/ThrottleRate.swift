/// A throttle setting: `RATE/BURST` (`1/10`: one request a second, a burst of ten beyond it), or
/// `off`.
package struct ThrottleRate: Sendable, Equatable, CustomStringConvertible {
    /// Tokens a second.
    package let rate: Double
    /// Requests allowed at once beyond the rate.
    package let burst: Int

    /// The backend's own throttle, as it documents it: one request a second per device address,
    /// with an initial burst of ten.
    package static let backend = ThrottleRate(rate: 1, burst: 10)

    package init(rate: Double, burst: Int) {
        self.rate = rate
        self.burst = burst
    }

    /// `RATE/BURST` (rate 0.001…10⁶ requests a second — a token at least every 1000 s — burst
    /// 0…10⁶), or
    /// `off` (`nil`; also `false`, what YAML makes of an unquoted `off`); `nil` with `valid`
    /// false when malformed.
    package static func parse(_ text: String) -> (rate: ThrottleRate?, valid: Bool) {
        if ["off", "false"].contains(text.lowercased()) { return (nil, true) }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let rate = Double(parts[0]), rate >= 0.001, rate <= 1_000_000,
            let burst = Int(parts[1]), (0...1_000_000).contains(burst)
        else { return (nil, false) }
        return (ThrottleRate(rate: rate, burst: burst), true)
    }

    package var description: String {
        let rateText = rate == rate.rounded() ? String(Int(rate)) : String(rate)
        return "\(rateText)/\(burst)"
    }
}
