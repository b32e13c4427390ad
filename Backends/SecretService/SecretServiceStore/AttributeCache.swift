/// The attributes of items this connection has read or written, so a find needs only `SearchItems` and one
/// bulk `GetSecrets` for items it has seen, instead of one `Properties.Get(Attributes)` per item (the Secret
/// Service API has no bulk attribute read).
///
/// An entry is used only while the daemon has announced no change of its item since the entry was read: the
/// connection follows the collection's `ItemChanged` and `ItemDeleted` signals and the daemon's name owner
/// (``Connection``), noted in arrival order before any later reply is read, and each entry keeps the epoch
/// (count of change signals) from before its read was sent. So an entry is never older than the last change
/// the daemon announced before the search that found its item. Secrets are never cached; they are read by
/// every find. This relies on the daemon emitting those signals, as the Secret Service specification requires.
struct AttributeCache {
    /// Past this many entries the cache starts over (memory stays bounded in a huge namespace).
    static let capacity = 20_000

    private var entries: [String: (attributes: [String: String], epoch: UInt64)] = [:]

    /// The attributes of `path` when still current (`changedSince(path, epoch)` false), else nil.
    func attributes(of path: String, changedSince: (String, UInt64) -> Bool) -> [String: String]? {
        guard let entry = entries[path], !changedSince(path, entry.epoch) else { return nil }
        return entry.attributes
    }

    /// Remembers attributes read (or written) by a call sent at `epoch`.
    mutating func remember(_ attributes: [String: String], of path: String, epoch: UInt64) {
        if entries.count >= Self.capacity { entries.removeAll(keepingCapacity: true) }
        entries[path] = (attributes, epoch)
    }

    mutating func forget(_ path: String) { entries[path] = nil }
}
