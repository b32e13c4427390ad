#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A backend's C library, opened at the backend's first use (`dlopen`) rather than when the program starts,
/// so a program that uses SQLite or memory never maps libpq or libsecret with its GLib, GIO and the rest.
///
/// Used by the PostgreSQL and Secret Service backends, each from the one file that calls its library: they
/// keep a ``LoadedFunctions`` table in a `static let` (so it is loaded once, thread-safe, at first use) and
/// call through the pointers. A library that is missing becomes a ``SecureStoreError/Code/notAvailable``
/// error naming the library and the package that provides it, never a crash. A program that links the
/// library itself gets the same copy (`dlopen` of a loaded library returns it).
package struct LoadedLibrary: @unchecked Sendable {   // the handle is never closed, its functions are thread-safe to look up
    /// The file name it was opened by (`libpq.so.5`).
    package let soname: String
    private let handle: UnsafeMutableRawPointer

    /// Opens `soname` (never closed). `backend` and `debianPackage` name what needs it and what to install,
    /// for the error.
    package static func open(_ soname: String, for backend: String, debianPackage: String)
        -> Result<LoadedLibrary, SecureStoreError>
    {
        guard let handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL) else {
            let why = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(SecureStoreError(.notAvailable,
                "The \(backend) backend needs the C library \(soname), which could not be loaded (\(why)). "
                + "Install it (Debian and Ubuntu: `apt install \(debianPackage)`) or choose another backend."))
        }
        return .success(LoadedLibrary(soname: soname, handle: handle))
    }

    private init(soname: String, handle: UnsafeMutableRawPointer) {
        self.soname = soname
        self.handle = handle
    }

    /// The addresses of these functions, in order (in the library or the libraries it depends on). A missing
    /// one (an older version of the library) is a `notAvailable` error naming it.
    package func functions(named names: [String], for backend: String) -> Result<[UnsafeRawPointer], SecureStoreError> {
        var addresses: [UnsafeRawPointer] = []
        addresses.reserveCapacity(names.count)
        for name in names {
            guard let address = dlsym(handle, name) else {
                return .failure(SecureStoreError(.notAvailable,
                    "The \(backend) backend needs \(name) from \(soname), which this version of the library lacks; "
                    + "install a newer one or choose another backend."))
            }
            addresses.append(UnsafeRawPointer(address))
        }
        return .success(addresses)
    }

    /// A table of `count` function pointers (a C struct of them, in the order of `names`) filled from the
    /// library, allocated once and never freed. `name(i)` is the C name of the i-th.
    package func table<Table>(of type: Table.Type, count: Int, name: (Int) -> String, for backend: String)
        -> Result<UnsafePointer<Table>, SecureStoreError>
    {
        precondition(MemoryLayout<Table>.size == count * MemoryLayout<UnsafeRawPointer>.stride,
                     "the function table must be exactly its \(count) pointers")
        switch functions(named: (0..<count).map(name), for: backend) {
        case .failure(let error):
            return .failure(error)
        case .success(let addresses):
            let raw = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<Table>.size,
                                                       alignment: MemoryLayout<Table>.alignment)
            for (i, address) in addresses.enumerated() {
                raw.storeBytes(of: address, toByteOffset: i * MemoryLayout<UnsafeRawPointer>.stride, as: UnsafeRawPointer.self)
            }
            return .success(UnsafePointer(raw.bindMemory(to: Table.self, capacity: 1)))
        }
    }
}

/// A backend's table of C functions from one library, loaded once: the backend keeps it in a `static let`
/// (so it is loaded once, thread-safe, at first use), calls ``require()`` before the first call of every
/// path into the library, and calls through ``functions`` afterwards.
package struct LoadedFunctions<Table>: @unchecked Sendable {   // the table is written once, before it is shared
    /// The table, or the `notAvailable` error of a library or function that could not be loaded.
    package let result: Result<UnsafePointer<Table>, SecureStoreError>
    private let soname: String

    /// Opens `soname` and fills a table of `count` pointers; `name(i)` is the C name of the i-th.
    package init(soname: String, for backend: String, debianPackage: String, count: Int, name: (Int) -> String) {
        self.soname = soname
        result = LoadedLibrary.open(soname, for: backend, debianPackage: debianPackage).flatMap { library in
            library.table(of: Table.self, count: count, name: name, for: backend)
        }
    }

    /// The `notAvailable` error (every time) when the library could not be loaded.
    package func require() throws(SecureStoreError) {
        _ = try result.get()
    }

    /// The looked-up functions; only reached after ``require()`` succeeded.
    package var functions: UnsafePointer<Table> {
        guard case .success(let table) = result else { preconditionFailure("\(soname) called before require()") }
        return table
    }
}
