//! Where the test SMTP server is: `SANDLOOM_TEST_SMTP_URL` (`smtp://host:port`, plain, no
//! auth), read at run time, else as it was at build time.

/// The server's host and port.
pub(crate) fn server() -> (String, u16) {
    let url = std::env::var("SANDLOOM_TEST_SMTP_URL")
        .ok()
        .or_else(|| option_env!("SANDLOOM_TEST_SMTP_URL").map(str::to_owned))
        .expect("SANDLOOM_TEST_SMTP_URL is not set: eval \"$(scripts/test-services up)\"");
    let address = url
        .strip_prefix("smtp://")
        .expect("SANDLOOM_TEST_SMTP_URL must look like smtp://host:port");
    let (host, port) = address
        .rsplit_once(':')
        .expect("SANDLOOM_TEST_SMTP_URL must name a port");
    (
        host.to_owned(),
        port.parse().expect("the port must be a number"),
    )
}
