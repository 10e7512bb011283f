//! `infra explain CODE`: the long explanation of a code, from `sandloom_kernel::codes`.

use std::io::Write;

use serde_json::json;

use super::{Failure, Format, Status, json as doc};
use sandloom_kernel::codes;

pub(super) fn run(code: &str, format: Format, out: &mut dyn Write) -> Result<Status, Failure> {
    let (Some(full), Some(text)) = (codes::parse(code), codes::explain(code)) else {
        return Err(Failure::BadInput(format!(
            "unknown code `{code}`: the codes are {} (written in full or as `B020`, in any case)",
            codes::ALL.join(", ")
        )));
    };
    match format {
        Format::Text => write!(out, "{full}\n\n{text}")?,
        Format::Json => doc::write(
            out,
            &doc::document("explain", json!({ "code": full, "explanation": text })),
        )?,
    }
    Ok(Status::Ok)
}
