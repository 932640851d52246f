/// A requestor (programmer / service provider) and the MVPDs it is integrated with.
public struct ReferenceRequestor: Codable, Sendable, Equatable {
    public var id: String
    /// MVPD ids, in the order the configuration endpoints list them.
    public var mvpds: [String]

    public init(id: String, mvpds: [String]) {
        self.id = id
        self.mvpds = mvpds
    }
}
