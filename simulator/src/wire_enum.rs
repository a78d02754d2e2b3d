//! `wrapper_enum!`: how a model declares its message or timer enum. One variant per wrapped type,
//! a `From` impl for each (so `ctx.send(to, Request { .. })` and `ctx.set_timer(after,
//! ServerTimer::Ping)` take the inner value), and a `Debug` that prints the inner value, so a
//! trace line reads as the protocol's own message or timer, not as the wrapper.
//!
//! ```
//! # use locksim_simulator::wrapper_enum;
//! #[derive(Clone, Debug)]
//! pub struct Ping;
//! #[derive(Clone, Debug)]
//! pub struct Pong { pub seq: u64 }
//! wrapper_enum! {
//!     /// Every message of a toy model.
//!     #[derive(Clone)]
//!     pub enum ToyMsg {
//!         Ping(Ping),
//!         Pong(Pong),
//!     }
//! }
//! let m: ToyMsg = Pong { seq: 3 }.into();
//! assert_eq!(format!("{m:?}"), "Pong { seq: 3 }");
//! ```
//!
//! Derives are the caller's (`#[derive(Clone)]` at least: messages are cloned when duplicated).
//!
//! Written `enum Name: Fingerprint { .. }`, it also implements
//! [`Fingerprint`](crate::fingerprint::Fingerprint): the variant's place in the declaration (a
//! byte), then the inner value's fingerprint. A model whose wrapped types all have typed
//! fingerprints opts in that way instead of writing a `match` over its variants by hand.
//!
//! ```
//! # use locksim_simulator::fingerprint::{hash_of, Renaming};
//! # use locksim_simulator::{fingerprint_struct, wrapper_enum};
//! #[derive(Clone, Debug)]
//! pub struct Ping { pub seq: u64 }
//! #[derive(Clone, Debug)]
//! pub struct Pong { pub seq: u64 }
//! fingerprint_struct!(Ping { seq });
//! fingerprint_struct!(Pong { seq });
//! wrapper_enum! {
//!     #[derive(Clone)]
//!     pub enum ToyMsg: Fingerprint {
//!         Ping(Ping),
//!         Pong(Pong),
//!     }
//! }
//! let ids = Renaming::identity(2);
//! let ping: ToyMsg = Ping { seq: 3 }.into();
//! let pong: ToyMsg = Pong { seq: 3 }.into();
//! // Same inner fields, another variant: another hash.
//! assert_ne!(hash_of(&ping, &ids), hash_of(&pong, &ids));
//! ```

/// Declares a wrapper enum (see the [module docs](crate::wire_enum)).
#[macro_export]
macro_rules! wrapper_enum {
    ($(#[$meta:meta])* $vis:vis enum $name:ident : Fingerprint { $($(#[$vmeta:meta])* $variant:ident($ty:ty)),* $(,)? }) => {
        $crate::wrapper_enum! {
            $(#[$meta])*
            $vis enum $name {
                $($(#[$vmeta])* $variant($ty),)*
            }
        }
        impl $crate::fingerprint::Fingerprint for $name {
            fn fingerprint(
                &self,
                h: &mut $crate::fingerprint::StableHasher,
                ids: &$crate::fingerprint::Renaming,
            ) {
                /// Each variant's number: its place in the declaration.
                enum Variant {
                    $($variant,)*
                }
                match self {
                    $($name::$variant(inner) => {
                        ::core::hash::Hasher::write_u8(h, Variant::$variant as u8);
                        $crate::fingerprint::Fingerprint::fingerprint(inner, h, ids);
                    })*
                }
            }
        }
    };
    ($(#[$meta:meta])* $vis:vis enum $name:ident { $($(#[$vmeta:meta])* $variant:ident($ty:ty)),* $(,)? }) => {
        $(#[$meta])*
        $vis enum $name {
            $($(#[$vmeta])* $variant($ty),)*
        }
        $(
            impl ::core::convert::From<$ty> for $name {
                fn from(inner: $ty) -> Self {
                    $name::$variant(inner)
                }
            }
        )*
        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match self {
                    $($name::$variant(inner) => ::core::fmt::Debug::fmt(inner, f),)*
                }
            }
        }
    };
}
