import Foundation

/// What tells two signed copies of one metadata source apart in time, so that a fetched copy
/// older than the one in use is refused instead of bringing back keys the publisher retired.
///
/// A signature proves who published a document, not when: anyone who kept an old signed copy
/// (a stale mirror or CDN node, anyone on the path of an `http://` source) can serve it again
/// until its `validUntil`. SAML metadata has no standard issue instant, so the order is read
/// from what the publisher signed:
///
/// - the `creationInstant` of `mdrpi:PublicationInfo` on the root, when both copies carry one
///   and they differ: the publisher's own statement of which came first, so it decides (a
///   newer publication may shorten `validUntil`);
/// - otherwise `validUntil` (the earliest the trust store applies to the entities it takes):
///   an earlier one than the copy in use is older, and so is none at all after a copy that had
///   one; with the same `validUntil`, a copy whose entities and keys differ cannot be shown to
///   be newer and is refused too (one that differs only in bytes, a re-signature, is not);
/// - with no `validUntil` on the copy in use there is nothing to order by, and the fetched copy
///   is taken (an `http://` source always has one: ``MetadataSource/check(_:now:)`` requires it).
public struct MetadataPublication: Sendable, Equatable {
    /// The earliest `validUntil` of the entities taken; `nil` when one of them has none.
    public let validUntil: Date?
    /// `mdrpi:PublicationInfo/@creationInstant` of the root, when it has one.
    public let creationInstant: Date?
    /// The entities taken and their signing certificates: what replacing the copy changes.
    let trusted: [String: Set<String>]

    init(entities: [MetadataEntity], creationInstant: Date?) {
        var validUntil: Date?
        var bounded = true
        for entity in entities {
            guard let until = entity.validUntil else {
                bounded = false
                continue
            }
            validUntil = validUntil.map { min($0, until) } ?? until
        }
        self.validUntil = bounded ? validUntil : nil
        self.creationInstant = creationInstant
        var trusted: [String: Set<String>] = [:]
        for entity in entities { trusted[entity.entityID, default: []].formUnion(entity.signingCertificates) }
        self.trusted = trusted
    }

    /// Why this copy, fetched, may not replace `current`, the copy in use; `nil` when it may.
    public func rollback(from current: MetadataPublication) -> String? {
        if let created = creationInstant, let currentCreated = current.creationInstant, created != currentCreated {
            guard created < currentCreated else { return nil }
            return "published \(created.ISO8601Format()), before the copy in use (\(currentCreated.ISO8601Format()))"
        }
        guard let currentUntil = current.validUntil else { return nil }
        guard let until = validUntil else {
            return "it has no validUntil; the copy in use is valid until \(currentUntil.ISO8601Format())"
        }
        if until < currentUntil {
            return "valid until \(until.ISO8601Format()), before the copy in use (\(currentUntil.ISO8601Format()))"
        }
        if until == currentUntil && trusted != current.trusted {
            return "the same validUntil as the copy in use (\(until.ISO8601Format())) with other entities or keys: not shown to be newer"
        }
        return nil
    }
}
