//! Every public contract has a kit, and no kit names an obligation twice. (Lived in driverkit's
//! tests while the kits were part of driverkit.)

#[test]
fn every_public_contract_has_a_kit_and_every_kit_obligation_is_named_once() {
    use sandloom_conformance as conformance;
    let kits: [(&str, &[&str]); 6] = [
        ("cache", conformance::cache::OBLIGATIONS),
        ("notifier", conformance::notifier::OBLIGATIONS),
        ("objectstore", conformance::objectstore::OBLIGATIONS),
        ("taskqueue", conformance::taskqueue::OBLIGATIONS),
        ("lock", conformance::lock::OBLIGATIONS),
        ("secrets", conformance::secrets::OBLIGATIONS),
    ];
    for spec in sandloom_kernel::registry::capabilities() {
        if spec.stability == sandloom_driverkit::Stability::Stable {
            assert!(
                kits.iter().any(|(name, _)| *name == spec.name),
                "public capability `{}` has no conformance kit; a contract is public only with a kit",
                spec.name
            );
        }
    }
    for (name, obligations) in kits {
        assert!(
            !obligations.is_empty(),
            "the `{name}` kit has no obligations"
        );
        let mut sorted = obligations.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            sorted.len(),
            obligations.len(),
            "the `{name}` kit names an obligation twice"
        );
    }
}
