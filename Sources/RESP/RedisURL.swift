import Foundation

/// Where the Redis server is and how to log in: `redis://[user:password@]host[:port][/db]`, or
/// `rediss://…` for TLS. The password is kept for AUTH and never shown (``description`` masks it).
package struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    package var host: String
    package var port: Int
    /// AUTH user (Redis 6 ACLs); `nil` with a password means the `default` user.
    package var user: String?
    package var password: String?
    /// SELECT this database after connecting (0 is Redis's default and is not sent).
    package var database: Int
    package var tls: Bool

    package init(host: String, port: Int = 6379, user: String? = nil, password: String? = nil, database: Int = 0, tls: Bool = false) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Parses the URL; the error says what is wrong without repeating the text (it may hold a password).
    package init(parsing text: String) throws(RESPError) {
        func bad(_ why: String) -> RESPError { RESPError(.protocol, "not a redis URL (\(why)); expected redis://[user:password@]host:port[/db]") }
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased() else {
            throw bad("unreadable")
        }
        guard scheme == "redis" || scheme == "rediss" else { throw bad("scheme must be redis or rediss") }
        guard var host = components.host, !host.isEmpty else { throw bad("no host") }
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard components.query == nil, components.fragment == nil else { throw bad("no query or fragment allowed") }
        let port = components.port ?? 6379
        guard (1...65535).contains(port) else { throw bad("port out of range") }
        var database = 0
        let path = components.path
        if !path.isEmpty && path != "/" {
            guard path.hasPrefix("/"), let number = Int(path.dropFirst()), (0...1_000_000).contains(number) else {
                throw bad("the path must be a database number")
            }
            database = number
        }
        let user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        let password = components.password.flatMap { $0.isEmpty ? nil : $0 }
        guard user == nil || password != nil else { throw bad("a user needs a password") }
        self.init(host: host, port: port, user: user, password: password, database: database, tls: scheme == "rediss")
    }

    /// The URL with the password masked: safe for logs, `/readyz` and error messages.
    package var description: String {
        var login = ""
        if password != nil { login = (user ?? "") + ":***@" }
        let shownHost = host.contains(":") ? "[\(host)]" : host
        return "\(tls ? "rediss" : "redis")://\(login)\(shownHost):\(port)/\(database)"
    }
}
