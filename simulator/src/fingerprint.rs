//! Typed state hashing for a world's symmetric fingerprint: [`Fingerprint`], written like `Debug`
//! but complete, hashes a value with a [`StableHasher`] through a [`Renaming`] of node ids.
//!
//! Why a trait and not the `Debug` text: a node id in model state is a plain `usize`, which the
//! `Debug` text prints like a count, so no renaming of clients can be applied to it; and a
//! hand-written `Debug` may leave a field out. An impl says which fields are node ids
//! ([`Renaming::node`] and its container forms) and destructures the value without `..`, so a
//! new field is a compile error until the impl hashes it:
//!
//! ```ignore
//! impl Fingerprint for Watcher {
//!     fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
//!         let Watcher { client, watch_id, key } = self;
//!         ids.node(h, *client);
//!         watch_id.fingerprint(h, ids);
//!         key.fingerprint(h, ids);
//!     }
//! }
//! ```
//!
//! Generic impls cover the primitives, strings, `Option`, `Vec`, `VecDeque`, `BTreeMap`,
//! `BTreeSet`, tuples, arrays, `Box` and references; a `usize` is hashed as a number (a count),
//! never renamed: a field holding a node id must go through [`Renaming::node`]. A map or set keyed
//! by node ids goes through [`Renaming::node_map`] / [`Renaming::node_set`] (sorted by the renamed
//! id: the map's own order is by the old id). A [`TimerId`] hashes as the timer it names (node
//! renamed, due time relative to now, tag), not its slot.
//!
//! A model opts in per type: `Process::as_fingerprint`, `LockClient::as_fingerprint`,
//! `Protocol::msg_fingerprint` and `Protocol::timer_fingerprint` return `Some(self)`. A world
//! any of whose parts lacks one is fingerprinted as before (`Debug` text, no symmetry).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::{self, Write as _};
use std::hash::Hasher;

use crate::directory::NodeId;
use crate::history::{FailReason, LockMode};
use crate::rng::ChaCha8Rng;
use crate::timers::{TimerId, TimerNames};

/// FNV-1a over the bytes, finished with a 64-bit mix (splitmix64's): the same value in every
/// build, on every platform and Rust version (std's `DefaultHasher` promises none of that).
/// Writes through `fmt::Write` too, so `Debug` text is hashed as it is formatted, unallocated.
#[derive(Clone, Copy, Debug)]
pub struct StableHasher(u64);

impl Default for StableHasher {
    fn default() -> Self {
        StableHasher(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for StableHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        let mut z = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl fmt::Write for StableHasher {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.write(s.as_bytes());
        Ok(())
    }
}

impl StableHasher {
    /// Hashes a value's `Debug` text, then a separator (so adjacent texts cannot run together).
    pub fn debug(&mut self, value: &(impl fmt::Debug + ?Sized)) {
        // Writing to a hasher cannot fail.
        let _ = write!(self, "{value:?}");
        self.write_u8(0xff);
    }
}

/// A value's complete state, hashed with node ids renamed (see the module docs).
pub trait Fingerprint {
    /// Feeds every field that can change what the value does into `h`, node ids through `ids`.
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming);
}

/// What a client id is hashed as while clients are being ordered: every renamed client looks
/// the same, so a client's own state hash does not depend on its id.
const ABSTRACT_CLIENT: u64 = u64::MAX - 1;

/// What the one client singled out by [`Renaming::marking`] is hashed as.
const MARKED_CLIENT: u64 = u64::MAX - 2;

/// How node ids are hashed in one fingerprint: each id as the id of the node it is renamed to
/// (servers, the resource and fixed clients as themselves), or, while clients are being ordered,
/// every interchangeable client as one abstract name. Also names each live timer by its hash.
#[derive(Clone, Debug, Default)]
pub struct Renaming {
    /// By old id: what the id is hashed as.
    names: Vec<u64>,
    /// Each live timer's hash (node renamed, due relative to now, tag); absent: dead.
    timers: TimerNames,
    /// By client index (`client-{i}`): the client's node id ([`Renaming::client_index`]).
    clients: Vec<NodeId>,
    /// Identity values by their hash ([`identity_hash`]): the renamed client that owns each and
    /// the value's place among that client's values ([`Renaming::identity_value`]). `None` (the
    /// plain fingerprint): values hash as values.
    owners: Option<BTreeMap<u64, (NodeId, u32)>>,
    /// By server index (`server-{i}`): the server's node id ([`Renaming::server_index`]).
    servers: Vec<NodeId>,
}

impl Renaming {
    /// Every id as itself (no symmetry): `n` nodes.
    pub fn identity(n: usize) -> Self {
        Renaming { names: (0..n as u64).collect(), ..Renaming::default() }
    }

    /// Every id as itself, except the ids in `abstracted`, which all hash alike.
    pub fn abstracting(n: usize, abstracted: &[NodeId]) -> Self {
        let mut r = Renaming::identity(n);
        for &id in abstracted {
            r.names[id] = ABSTRACT_CLIENT;
        }
        r
    }

    /// The same, with `id` hashed apart from every other (a client singled out to break a tie
    /// between clients whose own states are alike: what the rest of the world says of it).
    pub fn marking(mut self, id: NodeId) -> Self {
        self.names[id] = MARKED_CLIENT;
        self
    }

    /// Old id `perm[k]` is renamed to id `k` (`perm` a permutation of `0..n`).
    pub fn from_permutation(perm: &[NodeId]) -> Self {
        let mut names = vec![0; perm.len()];
        for (new, &old) in perm.iter().enumerate() {
            names[old] = new as u64;
        }
        Renaming { names, ..Renaming::default() }
    }

    /// Names the live timers (their hashes, computed under this renaming).
    pub fn with_timers(mut self, timers: TimerNames) -> Self {
        self.timers = timers;
        self
    }

    /// Names the clients by index (`clients[i]` is `client-{i}`'s node id).
    pub fn with_clients(mut self, clients: Vec<NodeId>) -> Self {
        self.clients = clients;
        self
    }

    /// Names the owners of identity values (see [`identity_owners`]): from then on an owned value
    /// hashes as its owner, through the renaming ([`Renaming::identity_value`]).
    pub fn with_identities(mut self, owners: BTreeMap<u64, (NodeId, u32)>) -> Self {
        self.owners = Some(owners);
        self
    }

    /// Hashes an identity value a client drew or was given (a Redis lock value, a ZooKeeper
    /// session id) that the model only compares for equality: never orders by it, iterates a map
    /// in its order in a way that changes behaviour, or derives a delay from it. With owners
    /// named ([`Renaming::with_identities`]), a value a renamed client owns hashes as that
    /// client, through the renaming (abstract while clients are ordered), and the value's place
    /// in the client's list (so a client's two values stay apart), so two swapped clients hash
    /// their values swapped; a value nobody owns (an old attempt's value left in a server)
    /// hashes as itself, tagged apart. Without owners (the plain fingerprint) exactly as
    /// `value.fingerprint` hashes it.
    pub fn identity_value(&self, h: &mut StableHasher, value: &(impl Fingerprint + ?Sized)) {
        let Some(owners) = &self.owners else { return value.fingerprint(h, self) };
        match owners.get(&identity_hash(value)) {
            Some(&(owner, place)) => {
                h.write_u8(1);
                self.node(h, owner);
                h.write_u32(place);
            }
            None => {
                h.write_u8(0);
                value.fingerprint(h, self);
            }
        }
    }

    /// Hashes an id whose high 32 bits are an identity value a client drew and whose low 32 bits
    /// count its calls (Hazelcast's invocation uids, `epoch << 32 | n`): the high half through
    /// [`Renaming::identity_value`], the low half as a number. A one-to-one function of the id
    /// under any renaming of identity values, so two ids are equal exactly when their hashes
    /// are; the order of two ids of one client (the same high half) is their low halves'.
    pub fn identity_high(&self, h: &mut StableHasher, id: u64) {
        self.identity_value(h, &(id >> 32));
        h.write_u32(id as u32);
    }

    /// Hashes an optional identity value ([`Renaming::identity_value`]).
    pub fn opt_identity_value(&self, h: &mut StableHasher, value: &Option<impl Fingerprint>) {
        match value {
            None => h.write_u8(0),
            Some(v) => {
                h.write_u8(1);
                self.identity_value(h, v);
            }
        }
    }

    /// Hashes a set or map keyed by identity values: each (renamed key, value) pair, sorted by
    /// the renamed key's hash (the map's own order is by the value, which a renaming does not
    /// keep). Sound only where the model does not iterate the map in its order in a way that
    /// changes what it does.
    pub fn identity_map<'a, K: Fingerprint + 'a, V: Fingerprint + 'a>(
        &self,
        h: &mut StableHasher,
        entries: impl IntoIterator<Item = (&'a K, &'a V)>,
    ) {
        if self.owners.is_none() {
            // As `BTreeMap`'s own impl: the length, then the pairs in the map's order.
            let entries: Vec<(&K, &V)> = entries.into_iter().collect();
            h.write_usize(entries.len());
            for (k, v) in entries {
                k.fingerprint(h, self);
                v.fingerprint(h, self);
            }
            return;
        }
        let parts: Vec<(u64, u64)> = entries
            .into_iter()
            .map(|(k, v)| {
                let mut key = StableHasher::default();
                self.identity_value(&mut key, k);
                (key.finish(), hash_of(v, self))
            })
            .collect();
        key_value_multiset(h, parts);
    }

    /// Names the servers by index (`servers[i]` is `server-{i}`'s node id).
    pub fn with_servers(mut self, servers: Vec<NodeId>) -> Self {
        self.servers = servers;
        self
    }

    /// How many servers are named by index (`server-0 …`; 0 where none were given).
    pub fn server_count(&self) -> usize {
        self.servers.len()
    }

    /// Hashes a server's index where a model uses it as the server's name (Redlock's master
    /// index, which a parallel round's request ids encode), as the server it names, through the
    /// renaming: two swapped masters hash their indexes swapped. An index of no server: the
    /// number.
    pub fn server_index(&self, h: &mut StableHasher, index: u64) {
        self.index_in(&self.servers, h, index);
    }

    /// Hashes a client's index where a model uses it as the client's name, an identity only
    /// compared for equality (DynamoDB's `ownerName`), as the client it names, through the
    /// renaming: swapped clients hash their indexes swapped. An index of no client: the number.
    pub fn client_index(&self, h: &mut StableHasher, index: u64) {
        self.index_in(&self.clients, h, index);
    }

    /// Hashes `index` as the node `nodes[index]` names, through the renaming, or (no such node)
    /// as the number, tagged apart.
    fn index_in(&self, nodes: &[NodeId], h: &mut StableHasher, index: u64) {
        match usize::try_from(index).ok().and_then(|i| nodes.get(i)) {
            Some(&id) => {
                h.write_u8(1);
                self.node(h, id);
            }
            None => {
                h.write_u8(0);
                h.write_u64(index);
            }
        }
    }

    /// What node `id` is hashed as (an id outside the world: itself, marked, so it cannot pass
    /// for a renamed one).
    pub fn name(&self, id: NodeId) -> u64 {
        self.names.get(id).copied().unwrap_or((id as u64) | 1 << 63)
    }

    /// Hashes a field that holds a node id.
    pub fn node(&self, h: &mut StableHasher, id: NodeId) {
        h.write_u64(self.name(id));
    }

    /// Hashes an optional node id.
    pub fn opt_node(&self, h: &mut StableHasher, id: Option<NodeId>) {
        match id {
            None => h.write_u8(0),
            Some(id) => {
                h.write_u8(1);
                self.node(h, id);
            }
        }
    }

    /// Hashes a sequence of node ids whose order means something (a queue), in its order.
    pub fn nodes<'a>(&self, h: &mut StableHasher, ids: impl IntoIterator<Item = &'a NodeId>) {
        let mut n = 0usize;
        for id in ids {
            self.node(h, *id);
            n += 1;
        }
        h.write_usize(n);
    }

    /// Hashes a set of node ids (order meaningless): sorted by renamed id.
    pub fn node_set<'a>(&self, h: &mut StableHasher, ids: impl IntoIterator<Item = &'a NodeId>) {
        let mut names: Vec<u64> = ids.into_iter().map(|id| self.name(*id)).collect();
        names.sort_unstable();
        h.write_usize(names.len());
        for n in names {
            h.write_u64(n);
        }
    }

    /// Hashes a map keyed by node id: each (renamed key, value) pair, sorted by renamed key.
    pub fn node_map<'a, V: Fingerprint + 'a>(
        &self,
        h: &mut StableHasher,
        entries: impl IntoIterator<Item = (&'a NodeId, &'a V)>,
    ) {
        let parts: Vec<(u64, u64)> = entries
            .into_iter()
            .map(|(k, v)| {
                let mut e = StableHasher::default();
                v.fingerprint(&mut e, self);
                (self.name(*k), e.finish())
            })
            .collect();
        key_value_multiset(h, parts);
    }

    /// Hashes a timer id as the timer it names, or as dead.
    pub fn timer(&self, h: &mut StableHasher, id: TimerId) {
        match self.timers.get(&id) {
            Some(t) => {
                h.write_u8(1);
                h.write_u64(*t);
            }
            None => h.write_u8(0),
        }
    }
}

/// A client's random stream by its stream number and position only, not its key: the key is
/// derived from the node's name, and hashing it would tell every client apart (no symmetry).
/// What that asks of a search is in docs/world-state.md ("Random streams under renaming").
pub fn stream_position(h: &mut StableHasher, rng: &ChaCha8Rng) {
    h.write_u64(rng.get_stream());
    h.write_u128(rng.get_word_pos());
}

/// A random stream's whole state: its key, stream number and position (what its next draw
/// depends on).
pub fn stream_state(h: &mut StableHasher, rng: &ChaCha8Rng) {
    h.write(&rng.get_seed());
    stream_position(h, rng);
}

/// A node id to hash through the renaming inside a tuple or a mapped container: `(tag,
/// AsNode(client)).fingerprint(h, ids)`.
#[derive(Clone, Copy, Debug)]
pub struct AsNode(pub NodeId);

impl Fingerprint for AsNode {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        ids.node(h, self.0);
    }
}

/// Hashes unordered (key, value) hash pairs (a map whose keys were renamed): sorted by key, so
/// the map's own order, by the old key, does not count.
fn key_value_multiset(h: &mut StableHasher, mut parts: Vec<(u64, u64)>) {
    parts.sort_unstable();
    h.write_usize(parts.len());
    for (k, v) in parts {
        h.write_u64(k);
        h.write_u64(v);
    }
}

/// Hashes unordered parts: sorted, so the order they came in does not count.
pub fn multiset(h: &mut StableHasher, mut parts: Vec<u64>) {
    parts.sort_unstable();
    h.write_usize(parts.len());
    for p in parts {
        h.write_u64(p);
    }
}

/// One value's hash on its own (for a multiset part or a sort key).
pub fn hash_of(value: &(impl Fingerprint + ?Sized), ids: &Renaming) -> u64 {
    let mut h = StableHasher::default();
    value.fingerprint(&mut h, ids);
    h.finish()
}

/// An identity value's hash, the key of [`Renaming::with_identities`]'s map: the value as itself
/// (a model lists its clients' identity values with this, `LockClient::identity_values`).
pub fn identity_hash(value: &(impl Fingerprint + ?Sized)) -> u64 {
    hash_of(value, &Renaming::default())
}

/// The owners of identity values from each client's claims (value hash, client), each client's
/// in the order its library lists them: a value is named by its owner and its place among that
/// owner's distinct values (an order that comes from the client's state, not from the values,
/// so a renaming keeps it). A value claimed by two clients (two equal draws, or a value one was
/// given by another) has no owner and hashes as itself, so the renaming of values stays
/// one-to-one.
pub fn identity_owners(claims: impl IntoIterator<Item = (u64, NodeId)>) -> BTreeMap<u64, (NodeId, u32)> {
    let mut owners: BTreeMap<u64, (NodeId, u32)> = BTreeMap::new();
    let mut places: BTreeMap<NodeId, u32> = BTreeMap::new();
    let mut shared = BTreeSet::new();
    for (value, owner) in claims {
        match owners.get(&value) {
            Some(&(other, _)) if other != owner => {
                shared.insert(value);
            }
            Some(_) => {}
            None => {
                let place = places.entry(owner).or_insert(0);
                owners.insert(value, (owner, *place));
                *place += 1;
            }
        }
    }
    for value in shared {
        owners.remove(&value);
    }
    owners
}

macro_rules! by_bytes {
    ($($t:ty => $w:ident),* $(,)?) => {$(
        impl Fingerprint for $t {
            fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
                h.$w(*self);
            }
        }
    )*};
}

by_bytes!(u8 => write_u8, u16 => write_u16, u32 => write_u32, u64 => write_u64, u128 => write_u128,
    usize => write_usize, i8 => write_i8, i16 => write_i16, i32 => write_i32, i64 => write_i64,
    i128 => write_i128, isize => write_isize);

impl Fingerprint for bool {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(*self as u8);
    }
}

impl Fingerprint for char {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u32(*self as u32);
    }
}

/// By bits: `0.0` and `-0.0` differ, as they may in what a model does with them.
impl Fingerprint for f64 {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u64(self.to_bits());
    }
}

impl Fingerprint for f32 {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u32(self.to_bits());
    }
}

impl Fingerprint for () {
    fn fingerprint(&self, _: &mut StableHasher, _: &Renaming) {}
}

impl Fingerprint for str {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_usize(self.len());
        h.write(self.as_bytes());
    }
}

impl Fingerprint for String {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        self.as_str().fingerprint(h, ids);
    }
}

impl Fingerprint for TimerId {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        ids.timer(h, *self);
    }
}

impl<T: Fingerprint + ?Sized> Fingerprint for &T {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        (**self).fingerprint(h, ids);
    }
}

impl<T: Fingerprint + ?Sized> Fingerprint for Box<T> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        (**self).fingerprint(h, ids);
    }
}

impl<T: Fingerprint + ?Sized> Fingerprint for std::sync::Arc<T> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        (**self).fingerprint(h, ids);
    }
}

impl<T: Fingerprint + ?Sized> Fingerprint for std::rc::Rc<T> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        (**self).fingerprint(h, ids);
    }
}

impl<T: Fingerprint, E: Fingerprint> Fingerprint for Result<T, E> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            Ok(v) => {
                h.write_u8(0);
                v.fingerprint(h, ids);
            }
            Err(e) => {
                h.write_u8(1);
                e.fingerprint(h, ids);
            }
        }
    }
}

impl<T: Fingerprint> Fingerprint for Option<T> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        match self {
            None => h.write_u8(0),
            Some(v) => {
                h.write_u8(1);
                v.fingerprint(h, ids);
            }
        }
    }
}

impl<T: Fingerprint> Fingerprint for [T] {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        h.write_usize(self.len());
        for v in self {
            v.fingerprint(h, ids);
        }
    }
}

impl<T: Fingerprint, const N: usize> Fingerprint for [T; N] {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        self.as_slice().fingerprint(h, ids);
    }
}

impl<T: Fingerprint> Fingerprint for Vec<T> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        self.as_slice().fingerprint(h, ids);
    }
}

impl<T: Fingerprint> Fingerprint for VecDeque<T> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        h.write_usize(self.len());
        for v in self {
            v.fingerprint(h, ids);
        }
    }
}

/// In key order: for keys that are not node ids (a node-id key goes through
/// [`Renaming::node_map`], whose order is the renamed one).
impl<K: Fingerprint, V: Fingerprint> Fingerprint for BTreeMap<K, V> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        h.write_usize(self.len());
        for (k, v) in self {
            k.fingerprint(h, ids);
            v.fingerprint(h, ids);
        }
    }
}

/// In order: for values that are not node ids ([`Renaming::node_set`] for those).
impl<T: Fingerprint> Fingerprint for BTreeSet<T> {
    fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
        h.write_usize(self.len());
        for v in self {
            v.fingerprint(h, ids);
        }
    }
}

macro_rules! tuples {
    ($(($($n:tt $t:ident),+)),* $(,)?) => {$(
        impl<$($t: Fingerprint),+> Fingerprint for ($($t,)+) {
            fn fingerprint(&self, h: &mut StableHasher, ids: &Renaming) {
                $(self.$n.fingerprint(h, ids);)+
            }
        }
    )*};
}

tuples!(
    (0 A),
    (0 A, 1 B),
    (0 A, 1 B, 2 C),
    (0 A, 1 B, 2 C, 3 D),
    (0 A, 1 B, 2 C, 3 D, 4 E),
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F),
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G),
    (0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H),
);

impl Fingerprint for LockMode {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(match self {
            LockMode::Exclusive => 0,
            LockMode::Shared => 1,
        });
    }
}

impl Fingerprint for FailReason {
    fn fingerprint(&self, h: &mut StableHasher, _: &Renaming) {
        h.write_u8(match self {
            FailReason::Timeout => 0,
            FailReason::Unavailable => 1,
            FailReason::Refused => 2,
            FailReason::SessionLost => 3,
        });
    }
}

/// Implements [`Fingerprint`] for a struct by destructuring every field (no `..`: a new field
/// is a compile error until it is listed). A field marked `@node` holds a node id, `@nodes` an
/// ordered sequence of them, `@node_set` a set of them, `@node_map` a map keyed by them, `@ident`
/// an identity value ([`Renaming::identity_value`]), `@opt_ident` an optional one, `@ident_map`
/// a map keyed by them ([`Renaming::identity_map`]), `@client_index` a client's index used as its
/// name ([`Renaming::client_index`]), `@ident_high` an id whose high half is an identity value
/// ([`Renaming::identity_high`]), `@skip` a field that cannot change what the
/// value does (say why beside the call).
///
/// ```ignore
/// fingerprint_struct!(Watcher { @node client, watch_id, key, @skip scratch });
/// ```
#[macro_export]
macro_rules! fingerprint_struct {
    ($ty:ident $(<$($g:ident),+>)? { $($(@$how:ident)? $field:ident),* $(,)? }) => {
        impl$(<$($g: $crate::fingerprint::Fingerprint),+>)? $crate::fingerprint::Fingerprint for $ty$(<$($g),+>)? {
            #[allow(unused_variables)]
            fn fingerprint(
                &self,
                h: &mut $crate::fingerprint::StableHasher,
                ids: &$crate::fingerprint::Renaming,
            ) {
                let $ty { $($field),* } = self;
                $($crate::fingerprint_field!(h, ids, $($how)? $field);)*
            }
        }
    };
}

/// One field of [`fingerprint_struct!`].
#[doc(hidden)]
#[macro_export]
macro_rules! fingerprint_field {
    ($h:ident, $ids:ident, $field:ident) => {
        $crate::fingerprint::Fingerprint::fingerprint($field, $h, $ids)
    };
    ($h:ident, $ids:ident, node $field:ident) => {
        $ids.node($h, *$field)
    };
    ($h:ident, $ids:ident, opt_node $field:ident) => {
        $ids.opt_node($h, *$field)
    };
    ($h:ident, $ids:ident, nodes $field:ident) => {
        $ids.nodes($h, $field.iter())
    };
    ($h:ident, $ids:ident, node_set $field:ident) => {
        $ids.node_set($h, $field.iter())
    };
    ($h:ident, $ids:ident, node_map $field:ident) => {
        $ids.node_map($h, $field.iter())
    };
    ($h:ident, $ids:ident, ident $field:ident) => {
        $ids.identity_value($h, $field)
    };
    ($h:ident, $ids:ident, opt_ident $field:ident) => {
        $ids.opt_identity_value($h, $field)
    };
    ($h:ident, $ids:ident, ident_map $field:ident) => {
        $ids.identity_map($h, $field.iter())
    };
    ($h:ident, $ids:ident, ident_high $field:ident) => {
        $ids.identity_high($h, *$field)
    };
    ($h:ident, $ids:ident, client_index $field:ident) => {
        $ids.client_index($h, *$field as u64)
    };
    ($h:ident, $ids:ident, skip $field:ident) => {
        let _ = $field;
    };
}

/// Implements [`Fingerprint`] for fieldless enums and other `Copy + Debug` leaf types that hold
/// no node id, timer id or hidden field, by their derived `Debug` text (complete for a derive).
#[macro_export]
macro_rules! fingerprint_by_debug {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::fingerprint::Fingerprint for $ty {
            fn fingerprint(&self, h: &mut $crate::fingerprint::StableHasher, _: &$crate::fingerprint::Renaming) {
                h.debug(self);
            }
        }
    )*};
}

/// Implements [`Fingerprint`] for an enum: the variant's number (its place in the list, a byte),
/// then its fields in order, marked as in [`fingerprint_struct!`]. Every variant is listed (the
/// `match` is exhaustive) and every field of a struct or tuple variant is named (no `..`), so a
/// new variant or field is a compile error until it is hashed.
///
/// ```ignore
/// fingerprint_enum!(Op { Create(spec), GetData { path, watch }, Renew { @node client, lease }, Ping });
/// ```
#[macro_export]
macro_rules! fingerprint_enum {
    ($ty:ident $(<$($g:ident),+>)? {
        $($variant:ident $(($($tuple:tt)*))? $({$($named:tt)*})?),* $(,)?
    }) => {
        impl$(<$($g: $crate::fingerprint::Fingerprint),+>)? $crate::fingerprint::Fingerprint for $ty$(<$($g),+>)? {
            #[allow(unused_variables)]
            fn fingerprint(
                &self,
                h: &mut $crate::fingerprint::StableHasher,
                ids: &$crate::fingerprint::Renaming,
            ) {
                /// Each variant's number: its place in the list.
                enum Variant {
                    $($variant,)*
                }
                match self {
                    $($crate::fingerprint_variant_pattern!(
                        $ty $variant $(($($tuple)*))? $({$($named)*})?
                    ) => {
                        ::core::hash::Hasher::write_u8(h, Variant::$variant as u8);
                        $crate::fingerprint_variant_fields!(h, ids $(($($tuple)*))? $({$($named)*})?);
                    })*
                }
            }
        }
    };
}

/// The pattern of one variant of [`fingerprint_enum!`].
#[doc(hidden)]
#[macro_export]
macro_rules! fingerprint_variant_pattern {
    ($ty:ident $variant:ident) => {
        $ty::$variant
    };
    ($ty:ident $variant:ident ($($(@$how:ident)? $field:ident),* $(,)?)) => {
        $ty::$variant($($field),*)
    };
    ($ty:ident $variant:ident {$($(@$how:ident)? $field:ident),* $(,)?}) => {
        $ty::$variant { $($field),* }
    };
}

/// The fields of one variant of [`fingerprint_enum!`], hashed in order.
#[doc(hidden)]
#[macro_export]
macro_rules! fingerprint_variant_fields {
    ($h:ident, $ids:ident) => {};
    ($h:ident, $ids:ident ($($(@$how:ident)? $field:ident),* $(,)?)) => {
        $($crate::fingerprint_field!($h, $ids, $($how)? $field);)*
    };
    ($h:ident, $ids:ident {$($(@$how:ident)? $field:ident),* $(,)?}) => {
        $($crate::fingerprint_field!($h, $ids, $($how)? $field);)*
    };
}

/// Implements [`Fingerprint`] for fieldless `Copy` enums: the variant's discriminant, a byte.
#[macro_export]
macro_rules! fingerprint_fieldless {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::fingerprint::Fingerprint for $ty {
            fn fingerprint(&self, h: &mut $crate::fingerprint::StableHasher, _: &$crate::fingerprint::Renaming) {
                ::core::hash::Hasher::write_u8(h, *self as u8);
            }
        }
    )*};
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(v: &impl Fingerprint, ids: &Renaming) -> u64 {
        hash_of(v, ids)
    }

    #[test]
    fn node_ids_follow_the_renaming_and_counts_do_not() {
        let swap = Renaming::from_permutation(&[0, 2, 1]);
        let same = Renaming::identity(3);
        let mut a = StableHasher::default();
        swap.node(&mut a, 1);
        let mut b = StableHasher::default();
        same.node(&mut b, 2);
        assert_eq!(a.finish(), b.finish());
        // A count of 1 stays 1.
        assert_eq!(hash(&1usize, &swap), hash(&1usize, &same));
    }

    #[test]
    fn node_sets_and_maps_hash_in_renamed_order() {
        let swap = Renaming::from_permutation(&[0, 2, 1]);
        let same = Renaming::identity(3);
        let m1: BTreeMap<NodeId, u32> = [(1, 10), (2, 20)].into();
        let m2: BTreeMap<NodeId, u32> = [(2, 10), (1, 20)].into();
        let mut a = StableHasher::default();
        swap.node_map(&mut a, m1.iter());
        let mut b = StableHasher::default();
        same.node_map(&mut b, m2.iter());
        assert_eq!(a.finish(), b.finish());
        let mut c = StableHasher::default();
        same.node_map(&mut c, m1.iter());
        assert_ne!(a.finish(), c.finish());
    }

    #[test]
    fn identity_values_follow_their_owners_through_the_renaming() {
        // Client 1 owns "a", client 2 owns "b"; swapped, client 1 owns "b" and client 2 "a".
        let owned = |a: NodeId, b: NodeId, perm: &[NodeId]| {
            let owners = identity_owners([(identity_hash("a"), a), (identity_hash("b"), b)]);
            let ids = Renaming::from_permutation(perm).with_identities(owners);
            let mut h = StableHasher::default();
            ids.identity_value(&mut h, "a");
            ids.identity_value(&mut h, "stale");
            h.finish()
        };
        assert_eq!(owned(1, 2, &[0, 1, 2]), owned(2, 1, &[0, 2, 1]));
        assert_ne!(owned(1, 2, &[0, 1, 2]), owned(2, 1, &[0, 1, 2]));
        // One client's two values stay apart.
        let ids =
            Renaming::identity(3).with_identities(identity_owners([(identity_hash("a"), 1), (identity_hash("b"), 1)]));
        let (mut a, mut b) = (StableHasher::default(), StableHasher::default());
        ids.identity_value(&mut a, "a");
        ids.identity_value(&mut b, "b");
        assert_ne!(a.finish(), b.finish());
        // Plain (no owners): the value's own hash, as before.
        let mut h = StableHasher::default();
        Renaming::identity(3).identity_value(&mut h, "a");
        assert_eq!(h.finish(), hash_of("a", &Renaming::identity(3)));
        // A value two clients claim has no owner.
        assert!(!identity_owners([(7, 1), (7, 2), (8, 1)]).contains_key(&7));
    }

    #[test]
    fn abstracted_clients_hash_alike_and_others_do_not() {
        let abs = Renaming::abstracting(4, &[2, 3]);
        assert_eq!(abs.name(2), abs.name(3));
        assert_ne!(abs.name(1), abs.name(2));
        assert_ne!(abs.name(0), abs.name(1));
    }
}
