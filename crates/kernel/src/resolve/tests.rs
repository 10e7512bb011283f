//! Resolution's rules, each on hand-made entries and specs.

use semver::Version;

use super::{Inputs, Refusal, Verdict, resolve, resolve_for_report};
use crate::config::InfraConfig;
use crate::error::{Problem, UnusableReason};
use crate::link::LinkedDrivers;
use crate::options::{OptionsError, RawOptions, accepts_unknown_keys};
use crate::registry::{
    BoxError, BuildContext, BuiltDriver, CapabilitySpec, DriverEntry, ParsedOptions, Stability,
    capabilities,
};

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ProbeOptions {
    capacity: Option<u64>,
}

fn no_features() -> &'static [&'static str] {
    &[]
}

fn no_schema() -> Option<String> {
    None
}

fn parse(raw: &RawOptions) -> Result<ParsedOptions, OptionsError> {
    let options: ProbeOptions = raw.deserialize()?;
    Ok(ParsedOptions {
        value: Box::new(options),
        features: Vec::new(),
    })
}

fn build(_: ParsedOptions, _: &BuildContext<'_>) -> Result<BuiltDriver, BoxError> {
    Err("resolution builds nothing".into())
}

/// A hand-made entry, as driverkit's `register_driver!` would make it.
fn entry(
    capability: &'static str,
    name: &'static str,
    package: &'static str,
    version: &str,
) -> DriverEntry {
    DriverEntry {
        capability,
        name,
        package,
        contract_version: Version::parse(version).unwrap(),
        supported_features: no_features,
        parse_options: parse,
        accepts_unknown_keys: accepts_unknown_keys::<ProbeOptions>,
        options_schema: no_schema,
        build,
    }
}

fn spec(name: &'static str, package: &'static str, version: &str) -> CapabilitySpec {
    CapabilitySpec {
        name,
        stability: Stability::Stable,
        contract_version: Version::parse(version).unwrap(),
        required_operations: &["query"],
        features: &[],
        package,
    }
}

/// An experimental capability a package defines (`lock`, the last experimental built-in with
/// an operation trait, is stable since 1.0).
fn experimental_spec() -> CapabilitySpec {
    CapabilitySpec {
        stability: Stability::Experimental,
        ..spec("fulltext", "fulltext-contracts", "0.1.0")
    }
}

fn leak<T>(items: Vec<T>) -> &'static [T] {
    Box::leak(items.into_boxed_slice())
}

/// Resolve `config` against `drivers` and the kernel's own specs plus `specs`.
fn problems(
    config: &InfraConfig,
    drivers: Vec<DriverEntry>,
    specs: Vec<CapabilitySpec>,
    linked: &LinkedDrivers,
) -> Vec<Problem> {
    let specs: Vec<CapabilitySpec> = capabilities()
        .iter()
        .map(|s| CapabilitySpec {
            name: s.name,
            stability: s.stability,
            contract_version: s.contract_version.clone(),
            required_operations: s.required_operations,
            features: s.features,
            package: s.package,
        })
        .chain(specs)
        .collect();
    match resolve(&Inputs {
        config,
        drivers: leak(drivers),
        specs: leak(specs),
        requirements: &[],
        linked,
    }) {
        Ok(_) => Vec::new(),
        Err(problems) => problems,
    }
}

fn config(text: &str) -> InfraConfig {
    InfraConfig::from_toml_str(text, "infra.toml").unwrap()
}

#[test]
fn minor_and_patch_differences_resolve() {
    let config =
        config("[fulltext.default]\ndriver = \"tantivy\"\n[cache.default]\ndriver = \"probe\"");
    let found = problems(
        &config,
        vec![
            entry("fulltext", "tantivy", "fulltext-tantivy", "0.1.1"),
            entry("cache", "probe", "probe-cache", "1.4.0"),
        ],
        vec![spec("fulltext", "fulltext-contracts", "0.1.0")],
        &crate::link_drivers!(),
    );
    assert!(found.is_empty(), "{found:#?}");
}

fn contract_action(
    driver_version: &str,
    spec_package: &'static str,
    capability: &'static str,
) -> (String, String) {
    let config = config(&format!("[{capability}.default]\ndriver = \"tantivy\""));
    let specs = if capability == "cache" {
        Vec::new()
    } else {
        vec![spec(capability, spec_package, "1.2.0")]
    };
    let found = problems(
        &config,
        vec![entry(
            capability,
            "tantivy",
            "fulltext-tantivy",
            driver_version,
        )],
        specs,
        &crate::link_drivers!(),
    );
    let [problem] = found.as_slice() else {
        panic!("{found:#?}")
    };
    assert!(
        matches!(
            problem,
            Problem::Unusable {
                reason: UnusableReason::ContractVersion { .. },
                ..
            }
        ),
        "{problem}"
    );
    (problem.description(), problem.action())
}

#[test]
fn another_major_names_the_contract_package_and_whom_to_upgrade() {
    // A third-party contract that is behind the driver: upgrade the contract package.
    let (description, action) = contract_action("2.0.0", "fulltext-contracts", "fulltext");
    assert!(
        description.contains("defined by package `fulltext-contracts`"),
        "{description}"
    );
    assert_eq!(
        action,
        "the contract is behind: upgrade `fulltext-contracts` (the package that defines `fulltext`) to a version with contract 2.x, or use a version of `fulltext-tantivy` written for contract 1.x"
    );
    assert!(!action.contains("Sandloom"), "{action}");

    // A driver behind a third-party contract: upgrade the driver crate.
    let (_, action) = contract_action("0.3.0", "fulltext-contracts", "fulltext");
    assert_eq!(
        action,
        "the driver is behind: upgrade `fulltext-tantivy` to a version written for contract 1.x of `fulltext`, or use a version of `fulltext-contracts` (the package that defines `fulltext`) with contract 0.3.x"
    );

    // The kernel's own contract: upgrade Sandloom.
    let (_, action) = contract_action("2.0.0", "sandloom-kernel", "cache");
    assert_eq!(
        action,
        "the contract is behind: upgrade Sandloom (package `sandloom-kernel`, which defines `cache`) to a version with contract 2.x, or use a version of `fulltext-tantivy` written for contract 1.x"
    );
}

#[test]
fn a_misspelt_override_names_the_variable_to_rename() {
    let action_for = |variable: &str, value: &str| {
        let overridden = config("[cache.default]\ndriver = \"probe\"")
            .with_overrides([(variable.to_owned(), value.to_owned())])
            .unwrap();
        let found = problems(
            &overridden,
            vec![entry("cache", "probe", "probe-cache", "1.0.0")],
            vec![],
            &crate::link_drivers!(),
        );
        let [problem] = found.as_slice() else {
            panic!("{found:#?}")
        };
        problem.action()
    };
    assert_eq!(
        action_for("SANDLOOM__CACHE__DEFAULT__CAPACTIY", "5"),
        "rename the environment variable `SANDLOOM__CACHE__DEFAULT__CAPACTIY` to `SANDLOOM__CACHE__DEFAULT__CAPACITY`"
    );
    assert_eq!(
        action_for("SANDLOOM__CACHE__DEFAULT__COLOUR", "5"),
        "unset the environment variable `SANDLOOM__CACHE__DEFAULT__COLOUR`: the driver has no such option"
    );
    assert_eq!(
        action_for("SANDLOOM__CACHE__DEFAULT__CAPACITY", "many"),
        "fix the value of the environment variable `SANDLOOM__CACHE__DEFAULT__CAPACITY`, or unset it"
    );
}

/// An application's manifest, as `link_drivers!` embeds it.
const SHOP: &str = r#"
    [package]
    name = "shop"

    [dependencies]
    sandloom = "0.1"
    fulltext-tantivy = "1"
    acme-drivers = "1"
    shop-orders = { path = "../orders" }
    serde = { version = "1", features = ["derive"] }
    strsim = "0.11"
    tokio = "1"

    [target.'cfg(unix)'.dependencies]
    maps-tools = "1"

    [dev-dependencies]
    mail = { package = "acme-mail", version = "1" }
"#;

/// What the sources of `SHOP`'s dependencies provide, as `crate::survey` would read them:
/// three driver crates, a contract crate (`mail`, defining `geo`), a module crate, and
/// general-purpose crates that register nothing.
fn shop_survey() -> crate::survey::Survey {
    let drivers = crate::survey::Provides {
        drivers: true,
        capabilities: Vec::new(),
    };
    let nothing = crate::survey::Provides::default();
    [
        ("acme_drivers", drivers.clone()),
        ("fulltext_tantivy", drivers.clone()),
        ("maps_tools", drivers),
        (
            "mail",
            crate::survey::Provides {
                drivers: false,
                capabilities: vec!["geocoding".to_owned()],
            },
        ),
        ("shop_orders", nothing.clone()),
        ("serde", nothing.clone()),
        ("strsim", nothing.clone()),
        ("tokio", nothing),
    ]
    .into_iter()
    .map(|(name, provides)| (name.to_owned(), provides))
    .collect()
}

fn shop(linked: &[&'static str]) -> LinkedDrivers {
    crate::survey::preset("/made-up/shop", shop_survey());
    LinkedDrivers::__new(leak(linked.to_vec()), SHOP, "shop").__with_sources("/made-up/shop", None)
}

fn no_driver(text: &str, linked: &[&'static str]) -> Problem {
    let linked = shop(linked);
    let found = problems(
        &config(text),
        vec![],
        vec![
            spec("fulltext", "fulltext-contracts", "1.0.0"),
            spec("geo", "geo-contracts", "1.0.0"),
        ],
        &linked,
    );
    let [problem @ Problem::NoDriver { .. }] = found.as_slice() else {
        panic!("{found:#?}")
    };
    problem.clone()
}

#[test]
fn an_unknown_driver_names_the_unlinked_dependencies_that_may_provide_it() {
    // None is named like `osm` or `routing`: every unlinked dependency whose sources register
    // drivers is a candidate, under the name code uses; not the contract crate `mail`, the
    // module crate `shop_orders`, nor `serde`, `strsim` or `tokio`.
    let problem = no_driver("[geo.routing]\ndriver = \"osm\"", &[]);
    let Problem::NoDriver { candidates, .. } = &problem else {
        unreachable!()
    };
    assert_eq!(
        candidates,
        &["acme_drivers", "fulltext_tantivy", "maps_tools"]
    );
    assert_eq!(
        problem.to_string(),
        "[SANDLOOM-B020] no driver `geo.osm` is linked; `geo.routing` selects it (at infra.toml:2:1). Linked `geo` drivers: none. \
         Dependencies of this application that register drivers but are not named in `link_drivers!`, so are not linked into the binary, and may provide it: `acme_drivers`, `fulltext_tantivy`, `maps_tools`\n    \
         Action: name the crate that provides `geo.osm` in the application's `sandloom::link_drivers!(…)` call: of its dependencies, `acme_drivers`, `fulltext_tantivy`, `maps_tools` register drivers, are not named there and may provide it (for example `sandloom::link_drivers!(…, acme_drivers)`); if none does, add the crate that provides it with `cargo add` and name it there too"
    );

    // A crate named in `link_drivers!` is linked: no candidate.
    let problem = no_driver("[geo.routing]\ndriver = \"osm\"", &["acme_drivers", "mail"]);
    let Problem::NoDriver { candidates, .. } = &problem else {
        unreachable!()
    };
    assert_eq!(candidates, &["fulltext_tantivy", "maps_tools"]);
    assert!(
        problem.action().contains(
            "of its dependencies, `fulltext_tantivy`, `maps_tools` register drivers, are not named there and may provide it"
        ),
        "{problem}"
    );

    // A dependency named like the capability or the driver is the one named.
    let problem = no_driver("[fulltext.default]\ndriver = \"elastic\"", &[]);
    let Problem::NoDriver { candidates, .. } = &problem else {
        unreachable!()
    };
    assert_eq!(candidates, &["fulltext_tantivy"]);
    assert_eq!(
        problem.action(),
        "name the crate that provides `fulltext.elastic` in the application's `sandloom::link_drivers!(…)` call: of its dependencies, `fulltext_tantivy` registers drivers, is not named there and may provide it (for example `sandloom::link_drivers!(…, fulltext_tantivy)`); if none does, add the crate that provides it with `cargo add` and name it there too"
    );

    // Where the sources cannot be read (a deployed binary), no crate is guessed.
    let deployed = LinkedDrivers::__new(&[], SHOP, "shop");
    let found = problems(
        &config("[fulltext.default]\ndriver = \"elastic\""),
        vec![],
        vec![spec("fulltext", "fulltext-contracts", "1.0.0")],
        &deployed,
    );
    let [Problem::NoDriver { candidates, .. }] = found.as_slice() else {
        panic!("{found:#?}")
    };
    assert!(candidates.is_empty());
    assert_eq!(
        found[0].action(),
        "add the crate that provides `fulltext.elastic` as a dependency and name it in `sandloom::link_drivers!(…)`, or select one of the linked drivers"
    );
}

#[test]
fn an_unknown_capability_names_the_unlinked_dependency_that_defines_it() {
    let text = "[geocoding.default]\ndriver = \"osm\"\n";
    let found = problems(&config(text), vec![], vec![], &shop(&[]));
    let [problem] = found.as_slice() else {
        panic!("{found:#?}")
    };
    assert_eq!(
        problem.to_string(),
        "[SANDLOOM-B010] unknown capability `geocoding` (at infra.toml:1:2)\n    \
         Action: link the crate that defines it: `mail`, a dependency of this application, defines `geocoding` but no code names it, so it is not linked into the binary; add it to the application's `sandloom::link_drivers!(…)` call"
    );
}

#[test]
fn a_driver_for_a_capability_without_an_operation_trait_is_refused() {
    for capability in ["graph_store", "workflow", "search"] {
        let configured = config(&format!("[{capability}.default]\ndriver = \"rogue\""));
        let found = problems(
            &configured,
            vec![entry(capability, "rogue", "rogue-driver", "0.1.0")],
            vec![],
            &crate::link_drivers!(),
        );
        let [problem] = found.as_slice() else {
            panic!("{found:#?}")
        };
        assert_eq!(problem.code(), "SANDLOOM-B022");
        assert!(
            matches!(
                problem,
                Problem::Unusable {
                    reason: UnusableReason::NoOperationTrait,
                    ..
                }
            ),
            "{problem}"
        );
        assert!(
            problem.description().ends_with(&format!(
                "cannot be used: capability `{capability}` is defined by Sandloom but has no operation trait yet, so no driver can serve it: modules have no way to call it, and its operations cannot be checked"
            )),
            "{problem}"
        );
        assert!(
            problem
                .action()
                .starts_with(&format!("remove `[{capability}.default]` from INFRA")),
            "{problem}"
        );
    }
}

#[test]
fn every_problem_is_reported_at_once_ordered_by_location() {
    let text = "environment = \"production\"\n\
                [fulltext.default]\n\
                driver = \"memory\"\n\
                [cache.default]\n\
                driver = \"probe\"\n\
                capacity = 18446744073709551616\n\
                [cache.other]\n\
                driver = \"probe\"\n\
                capacty = 3\n\
                [notifier.default]\n\
                level = \"info\"\n";
    let found = problems(
        &config(text),
        vec![entry("cache", "probe", "probe-cache", "1.0.0")],
        vec![experimental_spec()],
        &crate::link_drivers!(),
    );
    let summary: Vec<(&str, String)> = found
        .iter()
        .map(|p| {
            let description = p.description();
            let at = description
                .split_once("(at ")
                .and_then(|(_, rest)| rest.split(')').next())
                .unwrap_or_default()
                .to_owned();
            (p.code(), at)
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("SANDLOOM-B023", "infra.toml:2:2".to_owned()),
            ("SANDLOOM-B020", "infra.toml:3:1".to_owned()),
            ("SANDLOOM-B010", "infra.toml:6:12".to_owned()),
            ("SANDLOOM-B022", String::new()),
            ("SANDLOOM-B010", "infra.toml:10:11".to_owned()),
        ],
        "{found:#?}"
    );
    assert!(
        found[3]
            .description()
            .contains("invalid options at infra.toml:9:1"),
        "{}",
        found[3]
    );
}

/// The verdicts `why` shows for `fulltext.default` (an experimental capability) under `text`,
/// with a lone probe driver of it, and the problems `check` reports.
fn experimental_verdicts(text: &str) -> (Vec<&'static str>, Vec<Verdict>) {
    let config = config(text);
    let specs: Vec<CapabilitySpec> = capabilities()
        .iter()
        .map(|s| CapabilitySpec {
            name: s.name,
            stability: s.stability,
            contract_version: s.contract_version.clone(),
            required_operations: s.required_operations,
            features: s.features,
            package: s.package,
        })
        .chain([experimental_spec()])
        .collect();
    let drivers = leak(vec![entry("fulltext", "probe", "probe-fulltext", "0.1.0")]);
    let linked = crate::link_drivers!();
    let inputs = Inputs {
        config: &config,
        drivers,
        specs: leak(specs),
        requirements: &[],
        linked: &linked,
    };
    let (problems, verdicts) = resolve_for_report(&inputs, "fulltext", "default");
    let checked: Vec<&str> = match resolve(&inputs) {
        Ok(_) => Vec::new(),
        Err(problems) => problems.iter().map(Problem::code).collect(),
    };
    assert_eq!(
        checked,
        problems.iter().map(Problem::code).collect::<Vec<_>>(),
        "the report's problems are check's"
    );
    let verdicts = verdicts.candidates.into_iter().map(|c| c.verdict).collect();
    (checked, verdicts)
}

#[test]
fn the_experimental_rule_is_one_verdict_for_check_and_why() {
    let production = "environment = \"production\"\n";
    let instance = "[fulltext.default]\ndriver = \"probe\"\n";

    let (problems, verdicts) = experimental_verdicts(&format!("{production}{instance}"));
    assert_eq!(problems, ["SANDLOOM-B023"]);
    assert_eq!(
        verdicts,
        [Verdict::Refused(vec![Refusal::ExperimentalInProduction])]
    );

    let accepted = "accepted_risks = [\"experimental_capability\"]\n";
    let (problems, verdicts) = experimental_verdicts(&format!("{production}{accepted}{instance}"));
    assert!(problems.is_empty(), "{problems:?}");
    assert_eq!(verdicts, [Verdict::Selected]);

    // `accepted_risks` cannot be read: it is reported (B010), and whether the risk is accepted
    // is unknown, so neither check nor why refuses the instance for it on top.
    let unreadable = "accepted_risks = \"experimental_capability\"\n";
    let (problems, verdicts) =
        experimental_verdicts(&format!("{production}{unreadable}{instance}"));
    assert_eq!(problems, ["SANDLOOM-B010"]);
    assert_eq!(verdicts, [Verdict::Selected]);
}

#[test]
fn under_1_0_the_minor_is_the_major() {
    let config = config("[fulltext.default]\ndriver = \"tantivy\"");
    let found = problems(
        &config,
        vec![entry("fulltext", "tantivy", "fulltext-tantivy", "0.2.0")],
        vec![spec("fulltext", "fulltext-contracts", "0.1.0")],
        &crate::link_drivers!(),
    );
    let [problem] = found.as_slice() else {
        panic!("a driver at 0.2.0 on a contract at 0.1.0 is refused: {found:#?}")
    };
    assert_eq!(problem.code(), "SANDLOOM-B022");
    assert_eq!(
        problem.description(),
        "driver `fulltext.tantivy` (package `fulltext-tantivy`) for `fulltext.default` cannot be used: it implements contract 0.2.0 of `fulltext`, and the contract linked into this binary (defined by package `fulltext-contracts`) is 0.1.0: another major version (under 1.0 the leftmost non-zero component is the major: 0.2.x and 0.1.x differ)"
    );
    assert_eq!(
        problem.action(),
        "the contract is behind: upgrade `fulltext-contracts` (the package that defines `fulltext`) to a version with contract 0.2.x, or use a version of `fulltext-tantivy` written for contract 0.1.x"
    );
    // `why` words the same verdict.
    let why = crate::conditions::WhyNot::ContractMajor {
        driver: Version::new(0, 2, 0),
        runtime: Version::new(0, 1, 0),
        defined_by: "fulltext-contracts",
    };
    assert_eq!(
        why.to_string(),
        "written for contract 0.2.0, and the contract linked (defined by `fulltext-contracts`) is 0.1.0: another major version (under 1.0 the leftmost non-zero component is the major: 0.2.x and 0.1.x differ)"
    );
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct RequiredOptions {
    url: String,
    capacity: Option<u64>,
}

fn parse_required(raw: &RawOptions) -> Result<ParsedOptions, OptionsError> {
    let options: RequiredOptions = raw.deserialize()?;
    Ok(ParsedOptions {
        value: Box::new(options),
        features: Vec::new(),
    })
}

/// The option problems of `[cache.default]` with driver `required` and `options`.
fn option_problems(options: &str) -> Vec<String> {
    let config = config(&format!(
        "[cache.default]\ndriver = \"required\"\n{options}"
    ));
    let mut required = entry("cache", "required", "required-cache", "1.0.0");
    required.parse_options = parse_required;
    required.accepts_unknown_keys = accepts_unknown_keys::<RequiredOptions>;
    problems(&config, vec![required], Vec::new(), &crate::link_drivers!())
        .iter()
        .map(Problem::description)
        .collect()
}

#[test]
fn a_bad_required_option_is_reported_once_not_again_as_missing() {
    let found = option_problems("url = 5\ncapacity = \"x\"");
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].contains("infra.toml:3:1: option `url`"),
        "{found:#?}"
    );
    assert!(
        found[1].contains("infra.toml:4:1: option `capacity`"),
        "{found:#?}"
    );
}

#[test]
fn a_missing_required_option_is_reported_with_the_bad_ones() {
    let found = option_problems("capacity = \"x\"");
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(
        found[0].contains("infra.toml:1:8: missing field `url`"),
        "{found:#?}"
    );
    assert!(
        found[1].contains("infra.toml:3:1: option `capacity`"),
        "{found:#?}"
    );
}

/// Each problem's place, as `check` orders and the command line shows it.
fn placed(config: &InfraConfig, found: &[Problem]) -> Vec<(&'static str, String)> {
    found
        .iter()
        .map(|p| {
            let at = config
                .problem_location(p)
                .map_or_else(String::new, ToString::to_string);
            (p.code(), at)
        })
        .collect()
}

#[test]
fn an_unknown_capability_is_placed_at_its_name_in_each_header() {
    let text = "[Cache.default]\n\
                driver = \"memory\"\n\
                [ Cache . sessions ]\n\
                driver = \"memory\"\n";
    let config = config(text);
    let found = problems(&config, vec![], vec![], &crate::link_drivers!());
    assert_eq!(
        placed(&config, &found),
        [
            ("SANDLOOM-B010", "infra.toml:1:2".to_owned()),
            ("SANDLOOM-B010", "infra.toml:3:3".to_owned()),
        ],
        "{found:#?}"
    );
    assert_eq!(
        found[0].to_string(),
        "[SANDLOOM-B010] unknown capability `Cache` (did you mean `cache`?) (at infra.toml:1:2)\n    \
         Action: known capabilities are cache, lock, notifier, objectstore, secrets, taskqueue; a third-party capability is known once the crate defining it is linked"
    );
}

#[test]
fn an_experimental_capability_in_production_is_placed_at_the_capability() {
    let text = "environment = \"production\"\n\
                [preview.default]\n\
                driver = \"probe\"\n\
                [preview.second]\n\
                driver = \"probe\"\n";
    let config = config(text);
    let mut preview = spec("preview", "preview-contracts", "0.1.0");
    preview.stability = Stability::Experimental;
    let found = problems(
        &config,
        vec![entry("preview", "probe", "preview-probe", "0.1.0")],
        vec![preview],
        &crate::link_drivers!(),
    );
    assert_eq!(
        placed(&config, &found),
        [
            ("SANDLOOM-B023", "infra.toml:2:2".to_owned()),
            ("SANDLOOM-B023", "infra.toml:4:2".to_owned()),
        ],
        "{found:#?}"
    );
    assert_eq!(
        found[1].to_string(),
        "[SANDLOOM-B023] capability `preview` is experimental, and `preview.second` is configured in production (at infra.toml:4:2)\n    \
         Action: accept the risk with `accepted_risks = [\"experimental_capability\"]` at the top of INFRA, or remove the instance from the production configuration"
    );
}

#[test]
fn a_driver_at_another_contract_major_is_placed_at_its_name() {
    let text = "[cache.default]\n\
                capacity = 3\n\
                driver = \"probe\"\n";
    let config = config(text);
    let found = problems(
        &config,
        vec![entry("cache", "probe", "probe-cache", "2.0.0")],
        vec![],
        &crate::link_drivers!(),
    );
    assert_eq!(
        placed(&config, &found),
        [("SANDLOOM-B022", "infra.toml:3:1".to_owned())],
        "{found:#?}"
    );
}

#[test]
fn a_required_reserved_capability_is_not_sent_to_configure_it() {
    let problem = Problem::NoInstance {
        capability: "search".to_owned(),
        instance: "default".to_owned(),
        module: "shop",
        configured: Vec::new(),
    };
    assert_eq!(
        problem.action(),
        "`search` is reserved by Sandloom and not public yet: it has no operation trait, so no driver can serve it and INFRA cannot configure it. Remove the requirement from module `shop`; `search` becomes usable when a Sandloom release publishes its operation trait"
    );
    let public = Problem::NoInstance {
        capability: "cache".to_owned(),
        instance: "sessions".to_owned(),
        module: "shop",
        configured: Vec::new(),
    };
    assert_eq!(
        public.action(),
        "configure it: add `[cache.sessions]` with `driver = \"…\"` to INFRA"
    );
}
