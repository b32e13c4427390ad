/// The reconnect-once rule of the backends that keep a connection to a service (PostgreSQL, the Secret
/// Service): a connection reused from an earlier transaction may have gone stale since (the server or
/// daemon restarted), which shows only when it is used. Then the transaction runs once more, on a fresh
/// connection, provided nothing of it has happened yet.
package enum Reconnect {
    /// What one attempt tells ``once(_:)``.
    package struct Attempt {
        /// 1 for the first attempt, 2 for the retry.
        package let number: Int
        /// Set by the body when it used a connection kept from an earlier transaction.
        package var reusedConnection = false
        /// Cleared by the body once the transaction may have had an effect (its first write was sent, or the
        /// connection proved alive) or when a retry would only repeat a long wait (a timeout).
        package var retryable = true

        init(number: Int) { self.number = number }
    }

    /// Runs `body`; when its first attempt fails with `notAvailable` on a reused connection while still
    /// ``Attempt/retryable``, runs it once more (the body has dropped the broken connection by then).
    package static func once<T>(_ body: (inout Attempt) throws(SecureStoreError) -> T) throws(SecureStoreError) -> T {
        var first = Attempt(number: 1)
        do throws(SecureStoreError) {
            return try body(&first)
        } catch {
            guard first.reusedConnection, first.retryable, error.code == .notAvailable else { throw error }
        }
        var second = Attempt(number: 2)
        return try body(&second)
    }
}
