/// A requestor (programmer / service provider) and the MVPDs it is integrated with.
package struct ReferenceRequestor: Codable, Sendable, Equatable {
    package var id: String
    /// MVPD ids, in the order the configuration endpoints list them.
    package var mvpds: [String]

    package init(id: String, mvpds: [String]) {
        self.id = id
        self.mvpds = mvpds
    }
}
