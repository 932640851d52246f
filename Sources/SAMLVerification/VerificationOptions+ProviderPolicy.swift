extension VerificationOptions {
    /// These options with an MVPD's own policy laid over them (``ProviderPolicy``).
    public func applying(_ policy: ProviderPolicy) -> VerificationOptions {
        var options = self
        if let skew = policy.skew { options.clockSkew = skew }
        if let audience = policy.audience { options.audience = audience }
        if let lifetime = policy.maxAssertionLifetime { options.maxAssertionLifetime = lifetime }
        if let sha1 = policy.allowSHA1 { options.allowSHA1 = sha1 }
        if let inclusive = policy.allowInclusiveCanonicalization { options.allowInclusiveCanonicalization = inclusive }
        return options
    }
}
