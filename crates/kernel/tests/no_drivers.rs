//! With no driver crate in the dependency graph at all (the kernel never depends on driverkit or
//! a driver), selecting a built-in name tells the user which package to add.

use sandloom_kernel::{InfraConfig, Kernel, Problem};

#[test]
fn a_known_driver_that_is_not_a_dependency_names_the_crate_to_add() {
    let config = InfraConfig::embedded_defaults();
    let err = Kernel::new(config, sandloom_kernel::link_drivers!())
        .check()
        .unwrap_err();
    assert_eq!(err.codes(), ["SANDLOOM-B020"; 5], "{err}");
    let Problem::NoDriver {
        provided_by,
        dependency_not_linked,
        linked,
        ..
    } = &err.problems()[0]
    else {
        panic!("{err}")
    };
    assert_eq!(*provided_by, Some("sandloom-embedded"));
    assert!(!dependency_not_linked);
    assert!(linked.is_empty());
    let text = err.to_string();
    assert!(text.contains("`cargo add sandloom-embedded`"), "{text}");
    assert!(
        text.contains("sandloom::link_drivers!(sandloom_embedded)"),
        "{text}"
    );
}
