//! Linking driver crates into the application binary.
//!
//! A crate that no code names is not linked, and its driver registrations vanish with it. So an
//! application names its driver crates once, in [`link_drivers!`](crate::link_drivers), and the
//! kernel cannot start without the [`LinkedDrivers`] value that call produces.

/// The driver crates an application linked, and its own manifest for diagnostics.
///
/// ```
/// let linked = sandloom_kernel::link_drivers!();
/// assert!(linked.crates().is_empty());
/// assert_eq!(linked.application(), "sandloom-kernel");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct LinkedDrivers {
    crates: &'static [&'static str],
    manifest: &'static str,
    application: &'static str,
    manifest_dir: &'static str,
    cargo: Option<&'static str>,
}

impl LinkedDrivers {
    #[doc(hidden)]
    pub const fn __new(
        crates: &'static [&'static str],
        manifest: &'static str,
        application: &'static str,
    ) -> Self {
        Self {
            crates,
            manifest,
            application,
            manifest_dir: "",
            cargo: None,
        }
    }

    /// Where the application's manifest is, and the `cargo` that built it: what SANDLOOM-B020
    /// and B010 read the dependencies' sources with, when an error is being explained.
    #[doc(hidden)]
    #[must_use]
    pub const fn __with_sources(
        mut self,
        manifest_dir: &'static str,
        cargo: Option<&'static str>,
    ) -> Self {
        self.manifest_dir = manifest_dir;
        self.cargo = cargo;
        self
    }

    pub(crate) fn manifest_dir(&self) -> &'static str {
        self.manifest_dir
    }

    pub(crate) fn cargo(&self) -> Option<&'static str> {
        self.cargo
    }

    /// The crates named in `link_drivers!`, as written (`sandloom_embedded`).
    ///
    /// ```
    /// let linked = sandloom_kernel::link_drivers!(sandloom_sdk_infra);
    /// assert_eq!(linked.crates(), ["sandloom_sdk_infra"]);
    /// ```
    pub fn crates(&self) -> &'static [&'static str] {
        self.crates
    }

    /// The package that called `link_drivers!`.
    ///
    /// ```
    /// // In this example, the package is the one whose docs you are reading.
    /// assert_eq!(sandloom_kernel::link_drivers!().application(), "sandloom-kernel");
    /// ```
    pub fn application(&self) -> &'static str {
        self.application
    }

    /// Whether `package` was named in `link_drivers!`.
    ///
    /// ```
    /// let linked = sandloom_kernel::link_drivers!(sandloom_sdk_infra);
    /// assert!(linked.links("sandloom-sdk-infra")); // package names use `-`, crate names `_`
    /// assert!(!linked.links("sandloom-embedded"));
    /// ```
    pub fn links(&self, package: &str) -> bool {
        let ident = package.replace('-', "_");
        self.crates.iter().any(|c| *c == ident)
    }

    /// Whether `package` is a dependency (of any kind) in the application's `Cargo.toml`.
    /// Read only when an error is being explained.
    ///
    /// ```
    /// // Here the application is `sandloom-kernel`, whose Cargo.toml lists `tokio`.
    /// let linked = sandloom_kernel::link_drivers!();
    /// assert!(linked.is_dependency("tokio"));
    /// assert!(!linked.links("tokio")); // a dependency, but not named in `link_drivers!`
    /// assert!(!linked.is_dependency("sandloom-driverkit"));
    /// ```
    pub fn is_dependency(&self, package: &str) -> bool {
        self.dependencies().iter().any(|(_, p)| p == package)
    }

    /// Every dependency (of any kind, any target) in the application's `Cargo.toml`, as
    /// `(name in code, package)`: the two differ for a renamed dependency. Read only when an
    /// error is being explained.
    pub(crate) fn dependencies(&self) -> Vec<(String, String)> {
        let Ok(manifest) = self.manifest.parse::<toml::Table>() else {
            return Vec::new();
        };
        let mut tables: Vec<&toml::Table> = Vec::new();
        for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if let Some(table) = manifest.get(kind).and_then(toml::Value::as_table) {
                tables.push(table);
            }
        }
        if let Some(targets) = manifest.get("target").and_then(toml::Value::as_table) {
            for target in targets.values().filter_map(toml::Value::as_table) {
                for kind in ["dependencies", "dev-dependencies", "build-dependencies"] {
                    if let Some(table) = target.get(kind).and_then(toml::Value::as_table) {
                        tables.push(table);
                    }
                }
            }
        }
        tables
            .iter()
            .flat_map(|table| table.iter())
            .map(|(key, spec)| {
                let package = spec
                    .get("package")
                    .and_then(toml::Value::as_str)
                    .unwrap_or(key);
                (key.clone(), package.to_owned())
            })
            .collect()
    }
}

/// Link driver crates into this binary and describe them to the kernel.
///
/// Name every driver crate the application uses; the kernel needs the result to start, so the
/// call cannot be forgotten. Cargo dependencies that no code names are not linked: when `INFRA`
/// selects a driver from such a crate, SANDLOOM-B020 says to add it here.
///
/// ```
/// let linked = sandloom_kernel::link_drivers!(sandloom_sdk_infra);
/// assert!(linked.links("sandloom-sdk-infra"));
/// ```
#[macro_export]
macro_rules! link_drivers {
    ($($krate:ident),* $(,)?) => {{
        $(
            // Naming the crate makes rustc link it, and with it its driver registrations.
            #[allow(unused_imports)]
            use $krate as _;
        )*
        $crate::LinkedDrivers::__new(
            &[$(::core::stringify!($krate)),*],
            ::core::include_str!(::core::concat!(::core::env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")),
            ::core::env!("CARGO_PKG_NAME"),
        )
        .__with_sources(::core::env!("CARGO_MANIFEST_DIR"), ::core::option_env!("CARGO"))
    }};
}
