//! What a test macro finds out about the driver type where it is concrete, with no bound on the
//! kit: whether the driver and its options have `Debug`, and the options' JSON Schema (through
//! driverkit's `SchemaProbe`, as `register_driver!` finds it). A method call on
//! `&DebugProbe<T>` picks [`Shown`] when `T: Debug` and falls back to [`NotShown`] on the
//! autoref otherwise. Not public API: what `__describe!` expands to.

use std::fmt;
use std::marker::PhantomData;

use sandloom_driverkit::Driver;

/// What the kit learns of a driver type at its test macro: see `Kit::__described`.
#[doc(hidden)]
pub struct Described<T: Driver> {
    /// The options' JSON Schema, when the options type describes one.
    pub schema: Option<String>,
    /// The driver's `Debug`, when it has one.
    pub debug_driver: Option<fn(&T) -> String>,
    /// The options' `Debug`, when they have one.
    pub debug_options: Option<fn(&T::Options) -> String>,
}

/// Asks whether `T` has `Debug`.
#[doc(hidden)]
pub struct DebugProbe<T>(pub PhantomData<fn() -> T>);

/// The probe's answer for a type with `Debug`.
#[doc(hidden)]
pub trait Shown<T> {
    /// How to show a `T`.
    fn shown(&self) -> Option<fn(&T) -> String>;
}

/// The probe's answer for any other type.
#[doc(hidden)]
pub trait NotShown<T> {
    /// `None`: a `T` cannot be shown.
    fn shown(&self) -> Option<fn(&T) -> String>;
}

impl<T: fmt::Debug> Shown<T> for DebugProbe<T> {
    fn shown(&self) -> Option<fn(&T) -> String> {
        Some(|value| format!("{value:?}"))
    }
}

impl<T> NotShown<T> for &DebugProbe<T> {
    fn shown(&self) -> Option<fn(&T) -> String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{DebugProbe, NotShown as _, Shown as _};
    use std::marker::PhantomData;

    struct Opaque;

    #[test]
    // The borrow is the probe: it is what lets a missing impl fall back to the autoref.
    #[allow(clippy::needless_borrow)]
    fn a_type_with_debug_is_shown_and_others_are_not() {
        let show = (&DebugProbe::<u8>(PhantomData))
            .shown()
            .expect("u8 is Debug");
        assert_eq!(show(&7), "7");
        assert!((&DebugProbe::<Opaque>(PhantomData)).shown().is_none());
    }
}
