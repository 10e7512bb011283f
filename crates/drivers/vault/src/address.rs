//! The `address` option: the server's base URL, checked, as the API's base (`<address>/v1/`).

use sandloom_driverkit::SecretUrl;

/// `<address>/v1/` for an address, or why it is refused (never repeating user-info).
pub(crate) fn base_url(address: &SecretUrl) -> Result<String, String> {
    let url = reqwest::Url::parse(address.expose()).map_err(|e| {
        format!(
            "{address} is not a URL ({e}); write it as VAULT_ADDR is, https://vault.internal:8200"
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "{address} must start with http:// or https://, not {}://",
            url.scheme()
        ));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(format!(
            "{address} must not carry user-info: the driver logs in with `token` or AppRole"
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("{address} names no host"));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(format!("{address} must have no query or fragment"));
    }
    Ok(format!("{}/v1/", url.as_str().trim_end_matches('/')))
}
