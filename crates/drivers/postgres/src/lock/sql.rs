//! The lease table of `lock.postgres`, its migration and its statements.
//!
//! | column | meaning |
//! |---|---|
//! | `namespace`, `name` | which instance's which lock: the primary key |
//! | `token` | the holder's token; `NULL` once released |
//! | `fence` | the fence of the last grant of this name: the per-name counter |
//! | `expires_at` | when the holder's lease ends, on the server's clock |
//!
//! A row, once a name was first granted, is never deleted: it is the name's fence counter, so
//! fences keep growing for as long as the table lives (and with it across restarts of the
//! server and the application). A grant is one `INSERT … ON CONFLICT … DO UPDATE … WHERE` that
//! takes the row only when it is released or expired, and increments the fence in the same
//! statement: the row lock makes concurrent grants of one name take turns, and only the first
//! finds it free. Every time is the server's `now()`.

use crate::schema::{Layout, compact};

/// The quoted names of the lease table and the statements on it.
#[derive(Debug, Clone)]
pub(super) struct LockSql {
    schema: Option<String>,
    /// `"schema"."table"` or `"table"`.
    table: String,
    versions: String,
    /// The `NOTIFY` channel of releases: the table's unqualified name.
    pub(super) channel: String,
    /// `$1` namespace, `$2` name, `$3` token, `$4` ttl in ms → `fence`; no row when held.
    pub(super) grant: String,
    /// `$1` namespace, `$2` name → ms (rounded up) until the holder's lease ends (`NULL` when
    /// free), and the payload its release notifies.
    pub(super) holder: String,
    /// `$1` namespace, `$2` name, `$3` token, `$4` fence, `$5` channel → one row when released.
    pub(super) release: String,
    /// `$1` namespace, `$2` name, `$3` token, `$4` fence, `$5` ttl in ms → rows updated.
    pub(super) refresh: String,
}

/// The lease of `$1`/`$2` held by token `$3` with fence `$4`, not expired.
const HELD_BY: &str = "namespace = $1::text AND name = $2::text AND token = $3::text \
                       AND fence = $4::bigint AND expires_at > now()";

/// What a release notifies, and what a waiter listens for: one value per namespace and name,
/// of fixed length whatever the name's.
const PAYLOAD: &str = "md5($1::text || ':' || $2::text)";

impl LockSql {
    pub(super) fn new(schema: Option<&str>, table: &str) -> Self {
        let qualify = |name: &str| match schema {
            Some(schema) => format!("\"{schema}\".\"{name}\""),
            None => format!("\"{name}\""),
        };
        let t = qualify(table);
        let grant = compact(&format!(
            "INSERT INTO {t} AS l (namespace, name, token, fence, expires_at)
             VALUES ($1::text, $2::text, $3::text, 1,
                     now() + $4::bigint * interval '1 millisecond')
             ON CONFLICT (namespace, name) DO UPDATE
                 SET token = excluded.token, fence = l.fence + 1, expires_at = excluded.expires_at
                 WHERE l.token IS NULL OR l.expires_at <= now()
             RETURNING fence"
        ));
        let holder = compact(&format!(
            "SELECT (SELECT ceil(extract(epoch FROM expires_at - now()) * 1000)::bigint FROM {t}
                     WHERE namespace = $1::text AND name = $2::text
                       AND token IS NOT NULL AND expires_at > now()),
                    {PAYLOAD}"
        ));
        let release = compact(&format!(
            "WITH released AS (
                 UPDATE {t} SET token = NULL WHERE {HELD_BY} RETURNING 1
             )
             SELECT pg_notify($5::text, {PAYLOAD}) FROM released"
        ));
        let refresh = compact(&format!(
            "UPDATE {t} SET expires_at = now() + $5::bigint * interval '1 millisecond'
             WHERE {HELD_BY}"
        ));
        Self {
            schema: schema.map(|s| format!("\"{s}\"")),
            versions: qualify(&format!("{table}_schema")),
            channel: table.to_owned(),
            table: t,
            grant,
            holder,
            release,
            refresh,
        }
    }

    pub(super) fn table(&self) -> &str {
        &self.table
    }

    /// The migrations: migration `n` (1-based) brings the layout from version `n - 1` to `n`.
    pub(super) fn migrations(&self) -> [String; 1] {
        let t = &self.table;
        [format!(
            "CREATE TABLE IF NOT EXISTS {t} (
                 namespace text NOT NULL,
                 name text NOT NULL,
                 token text,
                 fence bigint NOT NULL,
                 expires_at timestamptz NOT NULL,
                 PRIMARY KEY (namespace, name)
             ) WITH (fillfactor = 80);"
        )]
    }

    /// The table as `schema::migrate` creates and checks it.
    pub(super) fn layout<'a>(&'a self, migrations: &'a [String]) -> Layout<'a> {
        Layout {
            driver: "lock.postgres",
            schema: self.schema.as_deref(),
            table: &self.table,
            versions: &self.versions,
            migrations,
            columns: "namespace, name, token, fence, expires_at",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_and_the_grant_mints_the_fence_in_its_statement() {
        let sql = LockSql::new(Some("locks"), "sandloom_locks");
        assert_eq!(sql.table(), "\"locks\".\"sandloom_locks\"");
        assert_eq!(sql.channel, "sandloom_locks");
        assert!(sql.grant.contains("fence = l.fence + 1"), "{}", sql.grant);
        assert!(sql.release.contains("pg_notify"), "{}", sql.release);
        let plain = LockSql::new(None, "l");
        assert_eq!(plain.table(), "\"l\"");
    }
}
