#if canImport(Glibc)
import Glibc
import SecureStoreCore

// Forks children from a single-threaded process (a sanitizer's runtime supports fork only there) and prints
// every persistent reference each process drew, for PersistentRefForkTests.
//
//   securestore-fork-probe CHILDREN COUNT   the parent draws 3 references,
//                                           forks CHILDREN children, and every process (the parent after the
//                                           forks) draws COUNT more with `PersistentRef.random()`
//
// Prints `ref P HEX` for each reference of process P (0 the parent, 1… the children), then `done N`, where N
// is the number of children that answered in full. A child that does not finish within 10 s is killed.

func say(_ text: String) {
    let line = Array((text + "\n").utf8)
    var sent = 0
    while sent < line.count {
        let n = line.withUnsafeBytes { raw in raw.baseAddress.map { write(1, $0 + sent, raw.count - sent) } ?? -1 }
        if n <= 0 { exit(70) }
        sent += n
    }
}

let args = CommandLine.arguments
guard args.count == 3, let children = Int(args[1]), let count = Int(args[2]), children > 0, count > 0 else {
    say("usage: securestore-fork-probe CHILDREN COUNT"); exit(64)
}

for _ in 0..<3 { _ = PersistentRef.random() }
var readers: [(pid: pid_t, fd: Int32)] = []
for _ in 0..<children {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { say("error pipe"); exit(71) }
    let pid = fork()
    if pid == 0 {
        close(fds[0])
        alarm(10)
        for _ in 0..<count {
            let bytes = [UInt8](PersistentRef.random().data)
            guard bytes.count == 16 else { _exit(1) }
            let n = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, 16) }
            if n != 16 { _exit(1) }
        }
        _exit(0)
    }
    close(fds[1])
    guard pid > 0 else { say("error fork"); exit(71) }
    readers.append((pid, fds[0]))
}
func hex(_ bytes: some Sequence<UInt8>) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
}
for _ in 0..<count { say("ref 0 \(hex(PersistentRef.random().data))") }
var answered = 0
for (index, reader) in readers.enumerated() {
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(reader.fd, $0.baseAddress, $0.count) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    close(reader.fd)
    var status: Int32 = 0
    while waitpid(reader.pid, &status, 0) == -1 && errno == EINTR {}
    for i in stride(from: 0, to: bytes.count - 15, by: 16) { say("ref \(index + 1) \(hex(bytes[i..<i + 16]))") }
    if status == 0 && bytes.count == count * 16 { answered += 1 }
}
say("done \(answered)")
#endif
