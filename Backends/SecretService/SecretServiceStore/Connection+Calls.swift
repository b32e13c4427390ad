import SecureStoreCore
import Foundation
internal import CSecret

/// Calls in flight together, the prompts a provider may answer a write with, and what a failure means.
///
/// **Outcomes.** A call that was never sent, or that the daemon refused, changed nothing. A write whose request
/// was sent but whose answer did not come (no reply within ``Connection/timeout``, or the daemon died while
/// holding it) may or may not have been carried out: that is `outcomeUnknown`, never `notAvailable`.
///
/// **One deadline per operation.** The first call of a batch that gets no answer in time ends the batch: the
/// calls still in flight are cancelled at once, no further call is sent, and the connection sends nothing more
/// (the transaction is not retried and its undo is not attempted on a daemon that does not answer). So an
/// operation waits for a silent daemon once, however many items it touches.
extension Connection {
    /// D-Bus calls in flight together: `start` begins call `i`, `finish` reads it after all completed (in call
    /// order, on this batch's main context, so it may complete a prompt). At most `window` calls are
    /// outstanding. `writes`: the calls change the keyring (an unanswered one is `outcomeUnknown`).
    func batch(count: Int, window: Int = Connection.readWindow, writes: Bool = false, doing what: (Int) -> String,
               start: (Int, UnsafeMutablePointer<SSCall>) throws(SecureStoreError) -> Void,
               finish: (Int, UnsafeMutablePointer<SSCall>) throws(SecureStoreError) -> Void) throws(SecureStoreError)
    {
        guard count > 0 else { return }
        guard !timedOut else { throw stopped(doing: what(0)) }
        let context = ss_batch_begin()
        let cancellable = ss_cancellable_new()
        var calls: [UnsafeMutablePointer<SSCall>] = []
        calls.reserveCapacity(count)
        defer {
            for call in calls { ss_prompt_end(service, call); ss_call_free(call) }
            ss_unref(UnsafeMutableRawPointer(cancellable))
            ss_batch_end(context)
        }
        var failure: SecureStoreError? = nil
        var unanswered: Int? = nil
        func startNext() {
            let call: UnsafeMutablePointer<SSCall> = ss_call_new(cancellable)
            calls.append(call)
            do throws(SecureStoreError) { try start(calls.count - 1, call) } catch {
                if failure == nil { failure = error }
                call.pointee.done = 1   // never started: nothing to wait for
            }
        }
        while calls.count < min(count, window) { startNext() }
        var i = 0
        while i < calls.count {
            ss_call_wait(context, calls[i])
            if unanswered == nil, ss_call_unanswered(calls[i]) != 0 {
                unanswered = i
                ss_cancel(cancellable)   // the others in flight end now; nothing more is started
            }
            if unanswered == nil, failure == nil, calls.count < count { startNext() }
            i += 1
        }
        if let unanswered {
            timedOut = true
            broken = true
            let sent = calls.filter { $0.pointee.sent != 0 }.count
            throw noAnswer(doing: what(unanswered), writes: writes, confirmed: unanswered, sent: sent, of: count,
                           gone: ss_call_gone(calls[unanswered]) != 0)
        }
        if let failure { throw failure }
        self.context = context
        defer { self.context = nil }
        for i in 0..<count {
            guard ss_call_ok(calls[i]) != 0 else { throw fail(ss_call_take_error(calls[i]), doing: what(i)) }
            try finish(i, calls[i])
        }
    }

    /// Asks the provider to go ahead with a prompt it answered a write with, and waits for its `Completed`
    /// signal; returns the object path it completed with (a new item's), if any. A provider that completes it at
    /// once (KeePassXC with no confirmation configured) needs no user. One that waits for a user past
    /// ``Connection/timeout`` is dismissed: `interactionNotAllowed` when it confirms the dismissal (nothing was
    /// done), `outcomeUnknown` when it says nothing. Runs inside ``batch``'s `finish`.
    func complete(prompt: String, doing what: String) throws(SecureStoreError) -> String? {
        guard let context else { throw SecureStoreError(.internalError, "A prompt was completed outside a batch.") }
        let call: UnsafeMutablePointer<SSCall> = ss_call_new(nil)
        defer { ss_prompt_end(service, call); ss_call_free(call) }
        ss_start_prompt(service, prompt, Self.timeout, call)
        ss_call_wait(context, call)
        guard ss_call_ok(call) != 0 else {
            if ss_call_unanswered(call) != 0 {
                timedOut = true
                broken = true
                throw noAnswer(doing: what + " (its prompt)", writes: true, confirmed: 0, sent: 1, of: 1, gone: ss_call_gone(call) != 0)
            }
            throw fail(ss_call_take_error(call), doing: what + " (its prompt)")
        }
        if ss_prompt_wait(context, call, Self.timeout) == 0 {
            ss_prompt_dismiss(service, prompt, Self.timeout)
            if ss_prompt_wait(context, call, Self.timeout) == 0 {
                timedOut = true
                broken = true
                throw SecureStoreError(.outcomeUnknown, "\(provider) asked for a confirmation while \(what) and did not "
                    + "answer when it was dismissed: it may or may not have done it. Check with `securestore find`, then retry.")
            }
        }
        if call.pointee.dismissed != 0 {
            throw SecureStoreError(.interactionNotAllowed, "\(provider) asked the user to confirm \(what), which is not "
                + "allowed here (nothing was done). Turn off its confirmation for Secret Service clients "
                + "(KeePassXC: Settings → Secret Service Integration), or unlock the keyring, and retry.")
        }
        return ss_prompt_result_path(call).map { String(cString: $0) }
    }

    /// No answer in time: reads are `notAvailable` (nothing changed); writes whose request was sent are
    /// `outcomeUnknown`.
    private func noAnswer(doing what: String, writes: Bool, confirmed: Int, sent: Int, of count: Int, gone: Bool) -> SecureStoreError {
        let silence = gone ? "The Secret Service went away (its process ended) before answering while \(what); now: \(provider)"
            : "\(provider) did not answer within \(Self.timeout) ms while \(what)"
        guard writes else {
            return SecureStoreError(.notAvailable, "Secret Service not available: \(silence); \(Self.hint).")
        }
        let tally = count == 1 ? "" : " (\(confirmed) of \(count) changes confirmed before; \(sent - confirmed) sent "
            + "without an answer; \(count - sent) not sent)"
        return SecureStoreError(.outcomeUnknown, "\(silence): the request reached it, so it may or may not have been "
            + "carried out\(tally). Nothing more was sent. Check with `securestore find` once the keyring answers, then retry.")
    }

    /// A connection whose daemon stopped answering sends nothing more.
    private func stopped(doing what: String) -> SecureStoreError {
        SecureStoreError(.notAvailable, "Secret Service not available: \(provider) stopped answering earlier on this "
            + "connection; not \(what). \(Self.hint.prefix(1).uppercased() + Self.hint.dropFirst()).")
    }

    func lockedError() -> SecureStoreError {
        SecureStoreError(.interactionNotAllowed,
            "The Secret Service collection \(collectionPath) is locked in \(provider); unlocking needs a prompt, which is not "
            + "allowed. Unlock your keyring (e.g. log in, or open it once in your keyring manager) and retry.")
    }

    /// Consumes `error`, marks the connection broken (but for a locked collection) and returns the mapped error.
    /// Messages carry D-Bus facts only, never secrets.
    func fail(_ error: UnsafeMutablePointer<GError>?, doing what: String) -> SecureStoreError {
        guard let error else {
            broken = true
            return SecureStoreError(.io, "Secret Service call failed while \(what) (no reason given).")
        }
        defer { ss_error_free(error) }
        let message = String(cString: ss_error_message(error))
        var remote = ""
        if let name = ss_error_remote_name(error) {
            remote = String(cString: name)
            ss_free(name)
        }
        if ss_error_is_locked(error) != 0 || remote == "org.freedesktop.Secret.Error.IsLocked" {
            return SecureStoreError(.interactionNotAllowed,
                "The Secret Service collection is locked in \(provider) (\(what)); unlocking needs a prompt, which is not "
                + "allowed. Unlock your keyring (e.g. log in, or open it once in your keyring manager) and retry.")
        }
        broken = true
        if ss_error_is_timeout(error) != 0 {
            timedOut = true
            return SecureStoreError(.notAvailable,
                "Secret Service not available: \(provider) did not answer within \(Self.timeout) ms while \(what); \(Self.hint).")
        }
        if ss_error_is_service_gone(error) != 0 || ss_error_is_no_such_object(error) != 0
            || remote.hasPrefix("org.freedesktop.DBus.Error.") || remote == "org.freedesktop.Secret.Error.NoSuchObject"
            || remote == "org.freedesktop.Secret.Error.NoSession"   // the daemon restarted since we connected
        {
            return SecureStoreError(.notAvailable,
                "Secret Service not available: \(message) (\(provider), while \(what)); \(Self.hint).")
        }
        return SecureStoreError(.io, "Secret Service call failed while \(what) (\(provider)): \(message)")
    }
}
