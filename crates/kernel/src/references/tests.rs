use super::uses::{SecretUse, UsedBy, secret_uses};
use crate::InfraConfig;

fn config(text: &str) -> InfraConfig {
    InfraConfig::from_toml_str(text, "infra.toml").unwrap()
}

#[test]
fn secret_uses_groups_options_by_store_and_secret() {
    let c = config(
        r#"
        [secrets.default]
        driver = "env"
        [secrets.vault]
        driver = "vault"
        token = { secret = "vault/token" }
        [taskqueue.default]
        driver = "postgres"
        password = { secret = "db/password" }
        [lock.default]
        driver = "postgres"
        password = { secret = "db/password", store = "default" }
        [cache.default]
        driver = "redis"
        url = { secret = "db/password", store = "vault" }
        "#,
    );
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    let used = |capability: &str, instance: &str, option: &str| UsedBy {
        capability: capability.into(),
        instance: instance.into(),
        option: option.into(),
    };
    assert_eq!(
        secret_uses(&c),
        [
            SecretUse {
                store: "default".into(),
                secret: "db/password".into(),
                used_by: vec![
                    used("lock", "default", "password"),
                    used("taskqueue", "default", "password")
                ],
            },
            SecretUse {
                store: "default".into(),
                secret: "vault/token".into(),
                used_by: vec![used("secrets", "vault", "token")],
            },
            SecretUse {
                store: "vault".into(),
                secret: "db/password".into(),
                used_by: vec![used("cache", "default", "url")],
            },
        ]
    );
}

#[test]
fn stores_start_in_waves_by_dependency() {
    let c = config(
        r#"
        [secrets.default]
        driver = "file"
        [secrets.vault]
        driver = "vault"
        token = { secret = "vault/token" }
        [secrets.other]
        driver = "vault"
        token = { secret = "t", store = "vault" }
        "#,
    );
    assert_eq!(
        super::judge::store_waves(&c),
        [
            vec!["default".to_owned()],
            vec!["vault".to_owned()],
            vec!["other".to_owned()]
        ]
    );
}

#[test]
fn malformed_references_are_b025_at_the_table() {
    for (text, expected) in [
        (
            r#"password = { secert = "db/password" }"#,
            "not `secert` (did you mean `secret`?)",
        ),
        (
            r#"password = { secret = "db//password" }"#,
            "invalid secret name",
        ),
        (r"password = { secret = 7 }", "`secret` must be a string"),
        (r#"password = { store = "vault" }"#, "has none"),
        (
            r#"password = { secret = "a", store = "Vault" }"#,
            "`store` must name",
        ),
        (
            r#"password = { secret = "a", store = "default", ttl = 1 }"#,
            "not `ttl`",
        ),
    ] {
        let c = config(&format!(
            "[taskqueue.default]\ndriver = \"postgres\"\n{text}\n"
        ));
        assert_eq!(c.problems().len(), 1, "{text}: {:?}", c.problems());
        let problem = &c.problems()[0];
        assert_eq!(problem.code(), "SANDLOOM-B025", "{text}");
        assert_eq!(
            problem.location().unwrap().to_string(),
            "infra.toml:3:12",
            "{text}"
        );
        assert!(
            problem.description().contains(expected),
            "{text}: {problem}"
        );
        assert!(c.instance("taskqueue", "default").is_none());
    }
    // A table that is no reference is an option like any other, even with keys like `store`.
    let c = config(
        "[cache.default]\ndriver = \"redis\"\ntls = { verify = true }\nlimits = { score = 1 }\n",
    );
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    assert_eq!(
        c.instance("cache", "default")
            .unwrap()
            .options
            .keys()
            .collect::<Vec<_>>(),
        ["limits", "tls"]
    );
}

#[test]
fn override_references_replace_literals_and_vice_versa() {
    let file = "[taskqueue.default]\ndriver = \"postgres\"\npassword = \"literal\"\nuser = { secret = \"db/user\" }\n";
    let c = config(file)
        .with_overrides([
            (
                "SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD__SECRET".to_owned(),
                "db/password".to_owned(),
            ),
            (
                "SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD__STORE".to_owned(),
                "vault".to_owned(),
            ),
            (
                "SANDLOOM__TASKQUEUE__DEFAULT__USER".to_owned(),
                "app".to_owned(),
            ),
        ])
        .unwrap();
    assert!(c.problems().is_empty(), "{:?}", c.problems());
    let queue = c.instance("taskqueue", "default").unwrap();
    assert_eq!(queue.options.keys().collect::<Vec<_>>(), ["user"]);
    let refs: Vec<String> = queue
        .references()
        .map(|(k, r)| format!("{k}={r} at {}", r.location))
        .collect();
    assert_eq!(
        refs,
        [
            r#"password={ secret = "db/password", store = "vault" } at environment variable SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD__SECRET"#
        ]
    );

    // Both at once, and a store without a secret.
    let c = config(file)
        .with_overrides([
            (
                "SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD__SECRET".to_owned(),
                "db/password".to_owned(),
            ),
            (
                "SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD".to_owned(),
                "x".to_owned(),
            ),
            (
                "SANDLOOM__TASKQUEUE__DEFAULT__USER__STORE".to_owned(),
                "vault".to_owned(),
            ),
        ])
        .unwrap();
    let shown: Vec<(String, String)> = c
        .problems()
        .iter()
        .map(|p| (p.code().to_owned(), p.location().unwrap().to_string()))
        .collect();
    assert_eq!(
        shown,
        [
            (
                "SANDLOOM-B025".to_owned(),
                "environment variable SANDLOOM__TASKQUEUE__DEFAULT__PASSWORD__SECRET".to_owned()
            ),
            (
                "SANDLOOM-B025".to_owned(),
                "environment variable SANDLOOM__TASKQUEUE__DEFAULT__USER__STORE".to_owned()
            ),
        ]
    );
    assert!(
        c.problems()[0]
            .description()
            .contains("set both to a value"),
        "{}",
        c.problems()[0]
    );
    assert!(
        c.problems()[1]
            .action()
            .contains("SANDLOOM__TASKQUEUE__DEFAULT__USER__SECRET"),
        "{}",
        c.problems()[1]
    );
}
