import Foundation
import SecureStoreProcess
import Glibc
import SecureStoreCore

/// Every read of standard input and write of standard output and error, checked: read(2)/write(2) loops that
/// retry on EINTR and turn any other failure into a `CLIError.io` (exit 74) or, for notes on standard
/// error, into nothing. SIGPIPE is ignored, so a closed pipe is the error EPIPE, not a signal.
enum StandardStreams {
    /// The standard descriptors (0, 1, 2) that were closed when the tool started. They are reopened on
    /// /dev/null at once, so no file the tool opens later (a store) can take their numbers.
    static let closedAtStart: Set<Int32> = {
        var closed: Set<Int32> = []
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            closed.insert(fd)
            let null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if null >= 0, null != fd {
                dup2(null, fd)
                close(null)
            }
        }
        return closed
    }()

    /// Call first: reopens closed standard descriptors and ignores SIGPIPE and SIGXFSZ (a write past the
    /// file-size limit is then the error EFBIG, handled like a full disk, instead of a signal death).
    static func prepare() {
        _ = closedAtStart
        signal(SIGPIPE, SIG_IGN)
        signal(SIGXFSZ, SIG_IGN)
    }

    /// Writes all of `bytes` to `fd`; 0, or the errno of the failed write.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
        guard let base = bytes.baseAddress else { return 0 }
        var offset = 0
        while offset < bytes.count {
            let n = write(fd, base + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN, wait(fd, for: Int16(POLLOUT)) { continue }   // a non-blocking descriptor
                return errno
            }
            offset += n
        }
        return 0
    }

    /// Writes the output a command exists to produce (a secret, a list, help) to standard output.
    /// - Throws: `.io` when standard output was closed or a write fails (EPIPE, ENOSPC, EIO, …).
    static func output(_ data: Data) throws(CLIError) {
        if closedAtStart.contains(1) { throw .io("cannot write to standard output: it is closed.") }
        let error = data.withUnsafeBytes { writeAll(1, $0) }
        if error != 0 { throw .io("cannot write to standard output: \(describe(error)).") }
    }

    static func output(_ text: String) throws(CLIError) { try output(Data(text.utf8)) }

    /// The closing report line of a command that changed the store ("deleted 2 item(s)"). The change is
    /// committed by then, so a failed write does not change the exit status; it is said on standard error.
    static func report(_ line: String) {
        do throws(CLIError) {
            try output(line + "\n")
        } catch {
            note("securestore: the change was made; its report could not be written (\(error.message))\n")
        }
    }

    /// A note on standard error (progress, prompts, messages); a failure to write it is ignored.
    @discardableResult
    static func note(_ text: String) -> Bool {
        if closedAtStart.contains(2) { return false }
        return Data(text.utf8).withUnsafeBytes { writeAll(2, $0) } == 0
    }

    /// Reads standard input to its end, at most `limit` bytes: reading stops as soon as there is more, and
    /// nothing more is buffered. The bytes live in one buffer that is zeroed when the data is released.
    /// - Throws: `.usage` when there is more than `limit`; `.io` when standard input is closed or unreadable.
    static func input(limit: Int = StoreLimits.maxSecretBytes) throws(CLIError) -> Data {
        if closedAtStart.contains(0) { throw .io("cannot read standard input: it is closed (give the secret on standard input).") }
        let capacity = limit + 1
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        func release() {
            memset(buffer, 0, capacity)
            buffer.deallocate()
        }
        var count = 0
        while count < capacity {
            let n = read(0, buffer + count, capacity - count)
            if n == 0 { break }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN, wait(0, for: Int16(POLLIN)) { continue }
                let e = errno
                release()
                throw .io("cannot read standard input: \(describe(e)).")
            }
            count += n
        }
        guard count <= limit else {
            release()
            throw .usage("standard input holds more than \(limit) bytes, the largest secret (StoreLimits.maxSecretBytes); "
                + "nothing was stored.")
        }
        return Data(bytesNoCopy: buffer, count: count, deallocator: .custom { _, _ in release() })
    }

    /// Waits until a non-blocking descriptor is ready; false when poll fails.
    static func wait(_ fd: Int32, for events: Int16) -> Bool {
        var p = pollfd(fd: fd, events: events, revents: 0)
        while true {
            let r = poll(&p, 1, -1)
            if r >= 0 { return true }
            if errno != EINTR { return false }
        }
    }

    static func describe(_ error: Int32) -> String {
        let name = switch error {
        case EPIPE: "EPIPE"
        case ENOSPC: "ENOSPC"
        case EFBIG: "EFBIG"
        case EIO: "EIO"
        case EBADF: "EBADF"
        case EAGAIN: "EAGAIN"
        default: "errno \(error)"
        }
        return "\(String(cString: strerror(error))) (\(name))"
    }
}

/// Makes the process non-dumpable before it touches a secret (``ProcessHardening/makeNonDumpable()``).
enum ProcessGuard {
    static func harden() throws(CLIError) {
        do throws(ProcessHardening.Failure) {
            try ProcessHardening.makeNonDumpable()
        } catch {
            throw .other(error.description)
        }
    }
}
