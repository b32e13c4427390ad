// A TCP proxy on 127.0.0.1 that forwards every connection to a server, and on request stalls one of them: a
// server that accepted the connection and never answers again, as a hung server or a dropped network does.
import Foundation
import SecureStoreCore
#if canImport(Glibc)
import Glibc
#endif

/// Forwards each connection made to ``port`` to `127.0.0.1:targetPort`, byte for byte, one thread per direction.
/// After ``stallNextRequest()`` the next bytes any client sends are swallowed and that connection forwards
/// nothing more either way: the caller's call hangs until its own deadline ends it, while every other
/// connection (and every new one) keeps working.
public final class StallingProxy: @unchecked Sendable {   // `listener` is written only by init and close (once)
    /// The port clients connect to.
    public let port: UInt16
    private let targetPort: UInt16
    private let listener: Int32
    private struct State {
        var stallNext = false
        var stalled: Set<Int32> = []
        var closed = false
        var open: Set<Int32> = []
        var connections = 0
    }
    private let state = Locked(State())

    /// Listens on a free port of 127.0.0.1; nil when no socket can be made.
    public init?(targetPort: UInt16) {
        self.targetPort = targetPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { p in
                bind(fd, p, length) == 0 && listen(fd, 64) == 0 && getsockname(fd, p, &length) == 0
            }
        }
        guard bound else {
            Glibc.close(fd)
            return nil
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "stalling-proxy"
        thread.start()
    }

    /// The next request any client sends is swallowed, and its connection forwards nothing more.
    public func stallNextRequest() {
        state.withLock { $0.stallNext = true }
    }

    /// How many connections are stalled now (their clients have not closed them yet).
    public var stalledConnections: Int { state.withLock { $0.stalled.count } }

    /// How many connections clients have made.
    public var connectionsMade: Int { state.withLock { $0.connections } }

    /// Stops accepting and closes every connection.
    public func close() {
        let fds: [Int32] = state.withLock { s in
            guard !s.closed else { return [] }
            s.closed = true
            return Array(s.open)
        }
        shutdown(listener, Int32(SHUT_RDWR))
        Glibc.close(listener)
        for fd in fds { shutdown(fd, Int32(SHUT_RDWR)) }
    }

    deinit { close() }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let server = connectTarget()
            let accepted: Bool = state.withLock { s in
                guard !s.closed, server >= 0 else { return false }
                s.open.insert(client)
                s.open.insert(server)
                s.connections += 1
                return true
            }
            guard accepted else {
                Glibc.close(client)
                if server >= 0 { Glibc.close(server) }
                continue
            }
            let pair = Pair(client: client, server: server)
            Thread { [self] in pump(pair, fromClient: true) }.start()
            Thread { [self] in pump(pair, fromClient: false) }.start()
        }
    }

    private func connectTarget() -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return -1 }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = targetPort.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let ok = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        guard ok else {
            Glibc.close(fd)
            return -1
        }
        return fd
    }

    /// The two sockets of one proxied connection; the second pump to end closes both.
    private final class Pair: @unchecked Sendable {   // `ended` only under `lock`
        let client: Int32, server: Int32
        private let lock = NSLock()
        private var ended = 0
        init(client: Int32, server: Int32) {
            self.client = client
            self.server = server
        }
        /// Whether this was the last pump of the pair.
        func end() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            ended += 1
            return ended == 2
        }
    }

    private func pump(_ pair: Pair, fromClient: Bool) {
        let from = fromClient ? pair.client : pair.server
        let to = fromClient ? pair.server : pair.client
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
            let forward: Bool = state.withLock { s in
                if s.stalled.contains(pair.client) { return false }
                if fromClient && s.stallNext {
                    s.stallNext = false
                    s.stalled.insert(pair.client)
                    return false
                }
                return true
            }
            guard forward else { continue }
            var sent = 0
            while sent < n {
                let m = buffer.withUnsafeBytes { bytes -> Int in
                    guard let base = bytes.baseAddress else { return -1 }
                    return send(to, base + sent, n - sent, Int32(MSG_NOSIGNAL))
                }
                if m < 0 && errno == EINTR { continue }
                guard m > 0 else { break }
                sent += m
            }
            guard sent == n else { break }
        }
        // One direction ended: end the other too (its read returns), then close both once.
        shutdown(pair.client, Int32(SHUT_RDWR))
        shutdown(pair.server, Int32(SHUT_RDWR))
        if pair.end() {
            state.withLock { s in
                s.stalled.remove(pair.client)
                s.open.remove(pair.client)
                s.open.remove(pair.server)
            }
            Glibc.close(pair.client)
            Glibc.close(pair.server)
        }
    }
}
