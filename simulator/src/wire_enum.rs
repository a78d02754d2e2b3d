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

/// Declares a wrapper enum (see the [module docs](crate::wire_enum)).
#[macro_export]
macro_rules! wrapper_enum {
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
