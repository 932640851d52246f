/// The test Redis could not be started.
package struct RedisServerError: Error, CustomStringConvertible {
    package let description: String

    init(_ description: String) {
        self.description = description
    }
}
