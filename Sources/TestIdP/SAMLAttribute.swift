/// One `saml:Attribute` with its values.
public struct SAMLAttribute: Sendable, Hashable {
    public var name: String
    public var values: [String]

    public init(name: String, values: [String]) {
        self.name = name
        self.values = values
    }

    public init(_ name: String, _ value: String) {
        self.init(name: name, values: [value])
    }

    /// Parses the CLI form `name=value`.
    public init?(argument: String) {
        guard let eq = argument.firstIndex(of: "="), eq != argument.startIndex else { return nil }
        self.init(String(argument[..<eq]), String(argument[argument.index(after: eq)...]))
    }
}
