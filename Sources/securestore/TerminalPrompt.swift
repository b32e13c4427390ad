import Foundation
import SecureStoreCore
#if canImport(Glibc)
import Glibc
import SecureStoreBackends
import SecureStoreProcess
#endif

/// Secrets typed by a person: asked on the terminal without echo when standard input is one, read byte for
/// byte from standard input otherwise (a pipe or a file, as a script gives them).
///
/// At the prompt the terminal is in canonical mode with echo off (line editing still works); a signal that
/// ends the process there (Ctrl-C, Ctrl-\, SIGTERM, SIGHUP) first puts the terminal back as it was. The typed
/// line lives in one fixed buffer that is zeroed when released (a growing array would leave partial copies
/// in freed memory); the line end is not part of it.
enum TerminalPrompt {
    /// The longest line accepted at a prompt (longer secrets come from a file or a pipe).
    static let maxBytes = 4096

    /// Whether standard input is a terminal (a person may be asked).
    static var isInteractive: Bool { isatty(0) == 1 }

    /// The secret for an item: asked on the terminal (twice when `confirm`, and the two must match), else all
    /// of standard input, byte for byte.
    /// - Throws: `.io` (exit 74) when standard input cannot be read; `.usage` past 1 MiB (``StandardStreams``).
    static func secret(for item: String, confirm: Bool) throws(CLIError) -> Data {
        guard isInteractive else { return try StandardStreams.input() }
        return try Commands.store { () throws(SecureStoreError) in
            try ask("Secret for \(item): ", confirm: confirm, what: "secret")
        }
    }

    /// Asks on the terminal; twice when `confirm`. Empty input and differing entries are refused.
    static func ask(_ prompt: String, confirm: Bool, what: String = "passphrase") throws(SecureStoreError) -> Data {
        let first = try readLine(prompt: prompt)
        guard !first.isEmpty else { throw .param(what, "Nothing was typed; nothing was stored or changed.") }
        // A passphrase is UTF-8 text, whatever its source (a secret is bytes).
        if what == "passphrase" { _ = try SecretText.strict(first, source: "The typed passphrase") }
        if confirm {
            let again = try readLine(prompt: "Again: ")
            guard again == first else {
                throw .param(what, "The two entries differ; nothing was stored or changed.")
            }
        }
        return first
    }

    /// The passphrase prompt for stores whose config names a passphrase variable that is not set: nil when
    /// standard input is not a terminal (a script gets an error, never a wait).
    static var passphrasePrompt: PassphrasePrompt? {
        guard isInteractive else { return nil }
        return { (prompt: String, confirm: Bool) throws(SecureStoreError) -> Data in
            try ask(prompt, confirm: confirm)
        }
    }

    /// Reads one line from the terminal on standard input with echo off; the prompt goes to the controlling
    /// terminal (standard error when there is none).
    static func readLine(prompt: String) throws(SecureStoreError) -> Data {
        var old = termios()
        guard tcgetattr(0, &old) == 0 else {
            throw SecureStoreError(.interactionNotAllowed, "Standard input is not a terminal to ask on.")
        }
        let tty = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        let out = tty >= 0 ? tty : 2
        defer { if tty >= 0 { close(tty) } }

        var quiet = old
        quiet.c_lflag &= ~tcflag_t(ECHO | ECHOE | ECHOK | ECHONL)
        quiet.c_lflag |= tcflag_t(ICANON)
        TerminalRestore.arm(old, quiet: quiet)
        guard tcsetattr(0, TCSAFLUSH, &quiet) == 0 else {
            TerminalRestore.disarm()
            throw SecureStoreError(.io, "Cannot turn off echo on the terminal: \(String(cString: strerror(errno))).")
        }
        defer {
            tcsetattr(0, TCSANOW, &old)
            TerminalRestore.disarm()
            say("\n", to: out)
        }
        // The prompt only once echo is off: what is typed after it is never shown (earlier typeahead was
        // discarded by TCSAFLUSH).
        say(prompt, to: out)

        let capacity = maxBytes + 1
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
        buffer.initialize(repeating: 0, count: capacity)
        var count = 0
        var tooLong = false
        var ended = false
        while !ended {
            let n = read(0, buffer + count, 1)
            if n < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                release(buffer, capacity)
                throw SecureStoreError(.io, "Reading from the terminal failed: \(reason).")
            }
            if n == 0 || buffer[count] == UInt8(ascii: "\n") {   // end of file (Ctrl-D) or the line end
                buffer[count] = 0
                ended = true
            } else if count < maxBytes {
                count += 1
            } else {
                tooLong = true   // keep reading to the line end (so nothing is left for the shell), keep nothing
                buffer[count] = 0
            }
        }
        if tooLong {
            release(buffer, capacity)
            throw .param("secret", "The typed line is longer than \(maxBytes) bytes; give a longer one through a pipe or a file.")
        }
        return Data(bytesNoCopy: buffer, count: count, deallocator: .custom { _, _ in release(buffer, capacity) })
    }

    private static func release(_ buffer: UnsafeMutablePointer<UInt8>, _ capacity: Int) {
        memset(buffer, 0, capacity)
        buffer.deallocate()
    }

    /// A prompt on the terminal (checked, retried on EINTR); on standard error when there is no terminal. A
    /// prompt that cannot be shown does not stop the read.
    private static func say(_ text: String, to fd: Int32) {
        if fd == 2 {
            StandardStreams.note(text)
        } else {
            _ = Data(text.utf8).withUnsafeBytes { StandardStreams.writeAll(fd, $0) }
        }
    }
}

/// Puts the terminal back when a signal ends the process at a prompt: the handler restores the saved
/// settings (tcsetattr is async-signal-safe), restores the default action and raises the signal again, so the
/// process ends as the signal says (a shell sees "killed by SIGINT").
private enum TerminalRestore {
    static let signals: [Int32] = [SIGINT, SIGQUIT, SIGTERM, SIGHUP]

    static func arm(_ settings: termios, quiet: termios) {
        terminalRestoreSettings.pointee = settings
        terminalQuietSettings.pointee = quiet
        armStop()
        var action = SignalAction()
        action.__sigaction_handler.sa_handler = { signal in
            _ = tcsetattr(0, TCSANOW, terminalRestoreSettings)
            Glibc.signal(signal, SIG_DFL)
            raise(signal)
        }
        sigemptyset(&action.sa_mask)
        for s in signals { sigaddset(&action.sa_mask, s) }   // one restore at a time
        action.sa_flags = 0
        for (i, s) in signals.enumerated() {
            var old = SignalAction()
            sigaction(s, nil, &old)
            terminalRestorePrevious[i] = old
            // A signal ignored when the tool started stays ignored (nohup, background jobs).
            if ProcessHardening.isIgnored(signal: s) { continue }
            sigaction(s, &action, nil)
        }
    }

    static func disarm() {
        for (i, s) in signals.enumerated() {
            var old = terminalRestorePrevious[i]
            sigaction(s, &old, nil)
        }
        sigaction(SIGTSTP, terminalStopPrevious, nil)
    }

    /// Ctrl-Z at a prompt: the terminal gets its echo back while the tool is stopped (the shell and the person
    /// use it meanwhile), and loses it again when the tool continues at the prompt. The handler restores the
    /// saved settings, stops the process with the default action, and on SIGCONT turns echo off again and
    /// re-arms itself (tcsetattr, sigaction, sigprocmask and raise are async-signal-safe).
    private static func armStop() {
        var action = SignalAction()
        action.__sigaction_handler.sa_handler = { _ in
            _ = tcsetattr(0, TCSANOW, terminalRestoreSettings)
            Glibc.signal(SIGTSTP, SIG_DFL)
            var unblock = sigset_t()
            sigemptyset(&unblock)
            sigaddset(&unblock, SIGTSTP)
            sigprocmask(SIG_UNBLOCK, &unblock, nil)
            raise(SIGTSTP)   // stopped here until SIGCONT
            sigprocmask(SIG_BLOCK, &unblock, nil)   // blocked again until the handler returns
            _ = tcsetattr(0, TCSANOW, terminalQuietSettings)
            sigaction(SIGTSTP, terminalStopAction, nil)
        }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0
        terminalStopAction.pointee = action
        sigaction(SIGTSTP, nil, terminalStopPrevious)
        // Ignored when the tool started (no job control): left alone.
        if ProcessHardening.isIgnored(signal: SIGTSTP) { return }
        sigaction(SIGTSTP, terminalStopAction, nil)
    }
}

// Read by the signal handler, so plain globals (a C function pointer captures nothing); written only before
// the handler is installed, on the one thread that prompts.
/// The settings the handler restores, in memory of its own (allocated once, before any handler is armed; never
/// freed), so the handler reads a plain pointer and no lazily initialized global.
nonisolated(unsafe) private let terminalRestoreSettings: UnsafeMutablePointer<termios> = {
    let settings = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    settings.initialize(to: termios())
    return settings
}()
nonisolated(unsafe) private let terminalQuietSettings: UnsafeMutablePointer<termios> = {
    let settings = UnsafeMutablePointer<termios>.allocate(capacity: 1)
    settings.initialize(to: termios())
    return settings
}()
nonisolated(unsafe) private let terminalStopAction: UnsafeMutablePointer<sigaction> = {
    let action = UnsafeMutablePointer<sigaction>.allocate(capacity: 1)
    action.initialize(to: sigaction())
    return action
}()
nonisolated(unsafe) private let terminalStopPrevious: UnsafeMutablePointer<sigaction> = {
    let action = UnsafeMutablePointer<sigaction>.allocate(capacity: 1)
    action.initialize(to: sigaction())
    return action
}()
nonisolated(unsafe) private var terminalRestorePrevious: [SignalAction] = Array(repeating: SignalAction(), count: 4)
private typealias SignalAction = sigaction
