//! `register_driver!`, `define_capability!`, and the hidden macros both expand to.

/// Register a driver type under `capability.name`. One call per driver; no `register()`
/// function, no order, nothing runs before `main`, and nothing is constructed until `INFRA`
/// selects the name.
///
/// Built-in capabilities: `cache`, `notifier`, `objectstore`, `taskqueue`, `lock`, `secrets`. The type must
/// implement that capability's provider trait (`CacheProvider` for `cache`): registering it under
/// another capability does not compile. Names are lowercase ASCII letters, digits, `_` and `-`,
/// checked at compile time.
///
/// ```
/// use sandloom_driverkit::{Driver, DriverError, Version};
/// use sandloom_driverkit::cache::{CacheOps, CacheProvider};
/// use sandloom_driverkit::sdk::{bytes::Bytes, InfraResult};
///
/// pub struct NullCache;
///
/// // Plain `async fn`: the native twin of `Cache`, which modules call through `&dyn Cache`.
/// impl CacheOps for NullCache {
///     async fn get(&self, _key: &str) -> InfraResult<Option<Bytes>> { Ok(None) }
///     async fn set(&self, _key: &str, _value: Bytes) -> InfraResult<()> { Ok(()) }
///     async fn delete(&self, _key: &str) -> InfraResult<bool> { Ok(false) }
/// }
///
/// impl Driver for NullCache {
///     type Options = sandloom_driverkit::NoOptions;
///     fn supported_features() -> &'static [&'static str] { &[] }
///     fn from_options(_: Self::Options) -> Result<Self, DriverError> { Ok(NullCache) }
/// }
///
/// impl CacheProvider for NullCache {
///     const CONTRACT_VERSION: Version = Version::new(1, 0, 0);
/// }
///
/// sandloom_driverkit::register_driver!(cache, "null", NullCache);
/// # fn main() {}
/// ```
///
/// A capability defined by another package (see [`define_capability!`](crate::define_capability))
/// uses the long form, naming the contract's marker type. The contract version comes from the
/// driver's provider trait, so it is written once, and a version of another major than the
/// contract's does not compile:
///
/// ```
/// use sandloom_driverkit::{Driver, DriverError, NoOptions, Version};
/// use sandloom_driverkit::sdk::InfraResult;
///
/// // In the package that defines the capability (its `contracts` crate):
/// sandloom_driverkit::define_capability! {
///     /// Translation between languages.
///     pub capability TranslateCapability {
///         name: "translate",
///         stability: Experimental,
///         contract_version: (0, 1, 0),
///         features: [],
///         key: TRANSLATE,
///         provider: TranslateProvider,
///         ops: TranslateOps,
///         gate: TranslateGate,
///     }
///     /// What modules call.
///     pub trait Translate {
///         /// `text` in the target language.
///         async fn translate(&self, text: &str) -> InfraResult<String>;
///     }
/// }
///
/// // In a driver crate:
/// pub struct Echo;
/// impl TranslateOps for Echo {
///     async fn translate(&self, text: &str) -> InfraResult<String> { Ok(text.to_owned()) }
/// }
/// impl Driver for Echo {
///     type Options = NoOptions;
///     fn supported_features() -> &'static [&'static str] { &[] }
///     fn from_options(_: NoOptions) -> Result<Self, DriverError> { Ok(Echo) }
/// }
/// impl TranslateProvider for Echo {
///     const CONTRACT_VERSION: Version = Version::new(0, 1, 0);
/// }
/// sandloom_driverkit::register_driver!(capability = TranslateCapability, driver = "echo", provider = Echo);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! register_driver {
    (cache, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::cache::CacheCapability, $name, $driver);
    };
    (notifier, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::notifier::NotifierCapability, $name, $driver);
    };
    (objectstore, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::objectstore::ObjectStoreCapability, $name, $driver);
    };
    (taskqueue, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::taskqueue::TaskQueueCapability, $name, $driver);
    };
    (lock, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::lock::LockCapability, $name, $driver);
    };
    (secrets, $name:literal, $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $crate::secrets::SecretsCapability, $name, $driver);
    };
    (graph_store, $($rest:tt)*) => { $crate::register_driver!(@not_public "graph_store"); };
    (workflow, $($rest:tt)*) => { $crate::register_driver!(@not_public "workflow"); };
    (search, $($rest:tt)*) => { $crate::register_driver!(@not_public "search"); };
    // The runtime's names by string: each gets the one answer that leads somewhere (a marker
    // type would not: the runtime's capabilities have the short form, or none yet).
    (capability = "graph_store", $($rest:tt)*) => { $crate::register_driver!(@not_public "graph_store"); };
    (capability = "workflow", $($rest:tt)*) => { $crate::register_driver!(@not_public "workflow"); };
    (capability = "search", $($rest:tt)*) => { $crate::register_driver!(@not_public "search"); };
    (capability = "cache", $($rest:tt)*) => { $crate::register_driver!(@short_form cache); };
    (capability = "notifier", $($rest:tt)*) => { $crate::register_driver!(@short_form notifier); };
    (capability = "objectstore", $($rest:tt)*) => { $crate::register_driver!(@short_form objectstore); };
    (capability = "taskqueue", $($rest:tt)*) => { $crate::register_driver!(@short_form taskqueue); };
    (capability = "lock", $($rest:tt)*) => { $crate::register_driver!(@short_form lock); };
    (capability = "secrets", $($rest:tt)*) => { $crate::register_driver!(@short_form secrets); };
    (@not_public $name:literal) => {
        ::core::compile_error!(::core::concat!(
            "`", $name, "` is reserved by Sandloom and not public yet: it has no operation trait, ",
            "so no driver can be registered for it (there is no marker type or provider trait to ",
            "implement), and INFRA cannot select one. It becomes public with its operation trait, ",
            "provider trait and conformance kit in a Sandloom release; until then, define a ",
            "capability of your own with `define_capability!`, under another name (one prefixed ",
            "with your package's name, say)"
        ));
    };
    (@short_form $name:ident) => {
        ::core::compile_error!(::core::concat!(
            "`", ::core::stringify!($name), "` is a built-in capability: register its drivers with ",
            "the short form, `register_driver!(", ::core::stringify!($name), ", \"name\", Type)`"
        ));
    };
    (capability = $capability:literal, $($rest:tt)*) => {
        ::core::compile_error!(::core::concat!(
            "`capability = ", ::core::stringify!($capability), "` names a capability by a string: ",
            "name the contract's marker type instead, the one its package declares with ",
            "`define_capability!` (e.g. `register_driver!(capability = my_contracts::FulltextCapability, ",
            "driver = \"mine\", provider = MyDriver)`); the contract version comes from the driver's ",
            "provider trait"
        ));
    };
    (capability = $capability:ty, driver = $name:literal, provider = $driver:ty $(,)?) => {
        $crate::register_driver!(@entry $capability, $name, $driver);
    };
    (capability = $capability:ty, driver = $name:literal, provider = $driver:ty, $($rest:tt)+) => {
        ::core::compile_error!(
            "the long form takes `capability = <contract marker>, driver = \"name\", provider = Type` \
             and nothing else: the operation trait and the contract version come from the \
             contract's provider trait, which the driver implements"
        );
    };
    ($capability:ident, $name:literal, $driver:ty $(,)?) => {
        ::core::compile_error!(::core::concat!(
            "`", ::core::stringify!($capability), "` is not a built-in capability (cache, notifier, ",
            "objectstore, taskqueue, lock, secrets). For a capability defined with `define_capability!`, use ",
            "the long form: `register_driver!(capability = path::to::Marker, driver = ",
            ::core::stringify!($name), ", provider = ", ::core::stringify!($driver),
            ")`, where `Marker` is the type the capability's package declares with `capability Marker { … }`"
        ));
    };
    (@entry $capability:ty, $name:literal, $driver:ty) => {
        const _: () = {
            ::core::assert!(
                $crate::__private::valid_name($name),
                "driver names are non-empty lowercase ASCII letters, digits, `_` or `-`"
            );

            // Checked here, not in the contract's `ProvidedBy` impl: a constant that fails is
            // reported where it is written, so this puts the error on the `register_driver!`
            // line of the driver's author, not inside the contract crate's macro.
            const CONTRACT: $crate::Version = $crate::__private::checked_contract(
                <$capability as $crate::Contract>::NAME,
                <$capability as $crate::ProvidedBy<$driver>>::DRIVER_CONTRACT,
                <$capability as $crate::Contract>::VERSION,
            );

            fn build(
                options: $crate::__private::ParsedOptions,
                context: &$crate::__private::BuildContext<'_>,
            ) -> ::core::result::Result<$crate::__private::BuiltDriver, $crate::__private::BoxError> {
                $crate::__private::build::<$driver, $capability>(options, context, $name)
            }

            // The options' JSON Schema when their type derives `JsonSchema` (see `Driver::Options`).
            // The borrow is the probe: without it, a type with no `JsonSchema` finds no method.
            #[allow(clippy::needless_borrow)]
            fn options_schema() -> ::core::option::Option<::std::string::String> {
                #[allow(unused_imports)]
                use $crate::__private::{DescribedOptions as _, UndescribedOptions as _};
                (&$crate::__private::SchemaProbe::<<$driver as $crate::Driver>::Options>(
                    ::core::marker::PhantomData,
                ))
                    .options_schema()
            }

            #[$crate::__private::linkme::distributed_slice($crate::__private::DRIVERS)]
            #[linkme(crate = $crate::__private::linkme)]
            #[allow(unsafe_code)] // linkme places the element with #[link_section]
            static ENTRY: $crate::__private::DriverEntry = $crate::__private::DriverEntry {
                capability: <$capability as $crate::Contract>::NAME,
                name: $name,
                package: ::core::env!("CARGO_PKG_NAME"),
                contract_version: CONTRACT,
                supported_features: <$driver as $crate::Driver>::supported_features,
                parse_options: $crate::__private::parse_options::<$driver>,
                accepts_unknown_keys:
                    $crate::__private::accepts_unknown_keys::<<$driver as $crate::Driver>::Options>,
                options_schema,
                build,
            };
        };
    };
}

/// Define a new capability: its contract (name, stability, version, optional features) and its
/// operation trait, from which driverkit generates everything the built-in capabilities have:
///
/// - the operation trait itself (`Send + Sync`, dyn-compatible: each method returns an
///   [`OpFuture`](crate::sdk::OpFuture) of `future_bytes` bytes, default
///   [`DEFAULT_FUTURE_BYTES`](crate::sdk::DEFAULT_FUTURE_BYTES)); an operation marked
///   `#[feature = "…"]` is optional and answers `Unsupported` unless a driver overrides it;
/// - its native twin (`ops`), the same operations as `async` methods, which drivers implement
///   with plain `async fn` (and every implementor gets the operation trait, by a blanket impl);
/// - the key modules use (`key`, a `CapabilityRef<dyn Trait>`);
/// - the provider trait drivers implement (`provider`): the native twin, plus
///   [`Driver`](crate::Driver), plus a required `CONTRACT_VERSION` that must have the contract's
///   major (checked at compile time);
/// - the feature gate (`gate`): an operation of a feature the instance did not declare answers
///   `Unsupported`, whatever the driver implements;
/// - the marker type (`capability`) that `register_driver!` and the kits take, and the spec the
///   kernel checks `INFRA` against.
///
/// Required operations are the ones without `#[feature]`; a required operation is never a
/// feature (checked at compile time). Names the runtime defines (`cache`, `notifier`,
/// `objectstore`, `taskqueue`, `lock`, `graph_store`, `workflow`, `search`, `secrets`: see
/// [`RESERVED_CAPABILITIES`](crate::RESERVED_CAPABILITIES)) are refused at compile time.
///
/// An operation gated on a feature `features` does not list is a compile error naming the
/// feature, the closest listed one (`fuzy`: did you mean `fuzzy`?) and the list. rustc reports
/// it at the `define_capability!` call rather than at the `#[feature = "…"]` attribute: the check
/// is a constant, and a constant's evaluation error is placed on the expression evaluated, which
/// a `macro_rules!` expansion cannot give the span of one token of its input.
///
/// Each operation is written `async fn name(&self, arg: Type, …) -> InfraResult<T>;`: no
/// generics, no patterns in arguments, no `&mut self`. Put the definition in a `contracts`
/// crate of your own, so modules can depend on it without depending on any driver.
///
/// ```
/// use sandloom_driverkit::sdk::InfraResult;
///
/// sandloom_driverkit::define_capability! {
///     /// Places and their coordinates.
///     pub capability GeocoderCapability {
///         name: "geocoder",
///         stability: Experimental,
///         contract_version: (0, 1, 0),
///         features: ["reverse"],
///         key: GEOCODER,
///         provider: GeocoderProvider,
///         ops: GeocoderOps,
///         gate: GeocoderGate,
///     }
///     /// What modules call.
///     pub trait Geocoder {
///         /// The coordinates of `place`, if known.
///         async fn locate(&self, place: &str) -> InfraResult<Option<(f64, f64)>>;
///         /// The place at `latitude`, `longitude`.
///         #[feature = "reverse"]
///         async fn reverse(&self, latitude: f64, longitude: f64) -> InfraResult<Option<String>>;
///     }
/// }
///
/// # fn main() {
/// assert_eq!(GEOCODER.name(), "geocoder");
/// # }
/// ```
///
/// An optional argument rather than an optional operation (a task queue's `enqueue` with a
/// delay) is written `#[feature = "delay", when = options.delay.is_some(), operation = "enqueue
/// with a delay"]`: the operation is required, and the gate refuses the call when the condition
/// holds and the feature is not declared. An operation may carry several such attributes.
///
/// An operation that waits for something to happen (a long poll) is declared so with
/// `#[waits = "what a cut means"]`, first among its attributes (after its docs). When its
/// instance begins to drain (at shutdown), a call still waiting is cut: it answers `Stopped` at
/// once instead of holding the drain for its whole budget. The text, added to the operation's
/// docs, tells callers what a cut means. An operation not so declared is never cut while the
/// drain runs; when the drain's budget ends, any operation still pending answers `Stopped`.
/// On a reload the old instance drains and a cut operation runs again, with the same arguments,
/// on the new instance, so its caller sees no error: the arguments of an operation declared
/// `#[waits]` must be `Clone` (each try takes copies). When an argument is bound to the
/// instance that issued it (a cursor in its history), running it as-is on another instance
/// would be wrong: add `rebind = path` to `#[waits]`, a function taking the operation trait as
/// `&dyn` and the operation's arguments. Sent to another instance by a reload, the operation
/// is then answered by that function, called on the handle modules hold (so on the instance
/// served now), instead of being run again with those arguments.
///
/// ```
/// use std::time::Duration;
/// use sandloom_driverkit::sdk::InfraResult;
///
/// sandloom_driverkit::define_capability! {
///     /// A feed of events.
///     pub capability FeedCapability {
///         name: "feed",
///         stability: Experimental,
///         contract_version: (0, 1, 0),
///         features: [],
///         key: FEED,
///         provider: FeedProvider,
///         ops: FeedOps,
///         gate: FeedGate,
///     }
///     /// What modules call.
///     pub trait Feed {
///         /// The events after `cursor`, waiting up to `wait` for one.
///         #[waits = "A cut loses no event: call again with the same cursor. A reload \
///             answers the events from the start of the new instance's history.",
///             rebind = from_the_start]
///         async fn events(&self, cursor: u64, wait: Duration) -> InfraResult<Vec<String>>;
///     }
/// }
///
/// /// A cursor of the replaced instance means nothing on the new one: start over there.
/// async fn from_the_start(feed: &dyn Feed, _cursor: u64, wait: Duration) -> InfraResult<Vec<String>> {
///     feed.events(0, wait).await
/// }
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! define_capability {
    (
        $(#[$marker_doc:meta])*
        $vis:vis capability $marker:ident {
            name: $name:literal,
            stability: $stability:ident,
            contract_version: ($major:literal, $minor:literal, $patch:literal),
            features: [$($feature:literal),* $(,)?],
            key: $key:ident,
            provider: $provider:ident,
            ops: $native:ident,
            gate: $gate:ident
            $(, future_bytes: $bytes:expr)? $(,)?
        }
        $(#[$trait_doc:meta])*
        $trait_vis:vis trait $ops:ident { $($methods:tt)* }
    ) => {
        const _: () = {
            ::core::assert!(
                $crate::__private::valid_name($name),
                "capability names are non-empty lowercase ASCII letters, digits, `_` or `-`"
            );
            ::core::assert!(
                !$crate::__private::is_reserved($name),
                "this name is reserved: the Sandloom runtime defines it (see \
                 `sandloom_driverkit::RESERVED_CAPABILITIES`); choose another, such as one \
                 prefixed with your package's name"
            );
        };

        $crate::sdk::__parse_operations! {
            callback: [$crate::__define_capability],
            context: [$(#[$marker_doc])* $vis $marker, $key, $provider, $gate],
            name: $name,
            stability: $stability,
            version: ($major, $minor, $patch),
            features: [$($feature),*],
            ops: $native,
            future_bytes: $crate::__define_capability!(@bytes $($bytes)?),
            trait: { $(#[$trait_doc])* $trait_vis trait $ops { $($methods)* } }
        }
    };
    // Written before `ops:` was required (issue 27): say exactly what to add.
    (
        $(#[$marker_doc:meta])*
        $vis:vis capability $marker:ident {
            name: $name:literal,
            $($field:ident: $value:tt,)*
        }
        $($rest:tt)*
    ) => {
        ::core::compile_error!(
            "`define_capability!` needs the name of the operation trait's native twin, which \
             drivers implement with plain `async fn`: add `ops: MyOperationsOps,` after \
             `provider: …,` in the capability block (e.g. `provider: TranslateProvider, \
             ops: TranslateOps, gate: TranslateGate`), and optionally `future_bytes: N` (the \
             inline buffer of an operation's future, default \
             `sandloom_driverkit::sdk::DEFAULT_FUTURE_BYTES`); drivers then write \
             `impl TranslateOps for MyDriver { async fn … }` with no `#[async_trait]`"
        );
    };
    (name: $name:literal, $($rest:tt)*) => {
        ::core::compile_error!(
            "`define_capability!` takes a marker type and the operation trait: \
             `define_capability! { pub capability MyCapability { name: \"…\", stability: …, \
             contract_version: (0, 1, 0), features: [..], key: MY_KEY, provider: MyProvider, ops: MyOperationsOps, \
             gate: MyGate } pub trait MyOperations { async fn …; } }`; see its documentation"
        );
    };
}

// Not public API: the marker type, its `Contract`, the provider trait and `ProvidedBy`: what
// every capability, built-in or not, gets from one definition.
#[doc(hidden)]
#[macro_export]
macro_rules! __contract {
    (
        marker: $marker:ident,
        name: $name:expr,
        version: ($major:literal, $minor:literal, $patch:literal),
        features: $features:expr,
        operations: $ops:ident,
        native: $native:ident,
        provider: $provider:ident,
        gate: $gate:ident
        $(, provider_doc: [$(#[$provider_doc:meta])*])? $(,)?
    ) => {
        impl $crate::Contract for $marker {
            const NAME: &'static str = $name;
            const VERSION: $crate::Version = $crate::Version::new($major, $minor, $patch);
            const FEATURES: &'static [&'static str] = $features;
            type Operations = dyn $ops;
            type Gated = $gate<dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync>;

            fn routed(
                route: ::std::sync::Arc<$crate::__private::Route<Self>>,
            ) -> ::std::sync::Arc<dyn $ops> {
                route
            }
        }

        #[doc = ::core::concat!(
            "A driver of this capability: [`", ::core::stringify!($ops), "`] plus `Driver` plus ",
            "the contract version it was written against.\n\n",
            "`CONTRACT_VERSION` has no default: a provider without one does not compile, and one of ",
            "another major than the contract's current version (", ::core::stringify!($major), ".",
            ::core::stringify!($minor), ".", ::core::stringify!($patch), ") does not compile either ",
            "once registered. The major is the leftmost non-zero component, as Cargo reads it (0.1 and ",
            "0.2 differ); minor and patch may differ either way above 1.0."
        )]
        $($(#[$provider_doc])*)?
        pub trait $provider: $native + $crate::Driver {
            /// The contract version this driver implements.
            const CONTRACT_VERSION: $crate::Version;
        }

        impl<T: $provider> $crate::ProvidedBy<T> for $marker {
            type Gate = $gate<T>;
            const DRIVER_CONTRACT: $crate::Version = <T as $provider>::CONTRACT_VERSION;

            fn upcast(gated: ::std::sync::Arc<$gate<T>>) -> ::std::sync::Arc<dyn $ops> {
                gated
            }

            fn erase(
                gated: ::std::sync::Arc<$gate<T>>,
            ) -> ::std::sync::Arc<
                $gate<dyn ::core::any::Any + ::core::marker::Send + ::core::marker::Sync>,
            > {
                gated
            }
        }
    };
}

// Not public API: everything `define_capability!` declares, from the normalized declaration
// `sandloom_sdk_infra::__parse_operations!` hands it: the same readers as the built-ins'.
#[doc(hidden)]
#[macro_export]
macro_rules! __define_capability {
    (@bytes) => { $crate::sdk::DEFAULT_FUTURE_BYTES };
    (@bytes $bytes:expr) => { $bytes };
    ([$(#[$marker_doc:meta])* $vis:vis $marker:ident, $key:ident, $provider:ident, $gate:ident] {
        name: $name:literal, stability: $stability:ident,
        version: ($major:literal, $minor:literal, $patch:literal),
        features: [$($feature:literal),*], required: [$($required:expr),*],
        trait: [$(#[$attr:meta])*] $ops_vis:vis $ops:ident $bounds:tt,
        native: $native:ident,
        bytes: $bytes:tt,
        operations: $operations:tt,
    }) => {
        $(#[$marker_doc])*
        ///
        /// The contract's marker type: what `register_driver!` and the conformance harness take.
        $vis struct $marker;

        #[doc = ::core::concat!(
            "The key modules use to reach the `", $name, "` capability: `infra.capability(&",
            ::core::stringify!($key), ", \"default\")`."
        )]
        $vis const $key: $crate::sdk::CapabilityRef<dyn $ops> = $crate::sdk::CapabilityRef::new($name);

        $crate::sdk::__operation_trait! { [] {
            name: $name, stability: $stability, version: ($major, $minor, $patch),
            features: [$($feature),*], required: [$($required),*],
            trait: [$(#[$attr])*] $ops_vis $ops $bounds,
            native: $native,
            bytes: $bytes,
            operations: $operations,
        } }

        $crate::__contract! {
            marker: $marker,
            name: $name,
            version: ($major, $minor, $patch),
            features: &[$($feature),*],
            operations: $ops,
            native: $native,
            provider: $provider,
            gate: $gate,
        }

        $crate::__gate! {
            [
                #[doc = ::core::concat!("The `", $name, "` capability behind its feature gate.")]
                #[doc(hidden)]
                $vis struct $gate for $marker
            ] {
                name: $name, stability: $stability, version: ($major, $minor, $patch),
                features: [$($feature),*], required: [$($required),*],
                trait: [$(#[$attr])*] $ops_vis $ops $bounds,
                native: $native,
                bytes: $bytes,
                operations: $operations,
            }
        }

        const _: () = {
            ::core::assert!(
                $crate::__private::disjoint(
                    &[$($required),*],
                    <$marker as $crate::Contract>::FEATURES,
                ),
                "a required operation is never a feature: an operation without #[feature] has the \
                 name of one of `features`"
            );

            #[$crate::__private::linkme::distributed_slice($crate::__private::CAPABILITIES)]
            #[linkme(crate = $crate::__private::linkme)]
            #[allow(unsafe_code)] // linkme places the element with #[link_section]
            static SPEC: $crate::__private::CapabilitySpec = $crate::__private::CapabilitySpec {
                name: $name,
                stability: $crate::Stability::$stability,
                contract_version: <$marker as $crate::Contract>::VERSION,
                required_operations: &[$($required),*],
                features: <$marker as $crate::Contract>::FEATURES,
                package: ::core::env!("CARGO_PKG_NAME"),
            };
        };
    };
}
