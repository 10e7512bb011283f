//! The Lua scripts of `lock.redis`, one per operation: each runs atomically on the server, so
//! no other client's command lands between its check and its write.
//!
//! The lease of a lock is one string key whose value is `{fence}:{token}` and whose expiry is
//! the lease's (the server's clock ends it); the fence counter is another key, without expiry.

use std::sync::LazyLock;

use redis::Script;

/// Grant: `KEYS[1]` the lease, `KEYS[2]` the fence counter; `ARGV[1]` the token, `ARGV[2]` the
/// ttl in milliseconds (empty: no expiry). Answers `{1, fence}` when granted, `{0, pttl}` when
/// held (`pttl` -1 for a lease without expiry).
///
/// A counter missing while a lease is granted (first use, or lost with a restart of a server
/// without persistence) is seeded from the server's `TIME` in microseconds: every fence minted
/// before was below the time it was minted at, so the new ones stay above them. Formatted as
/// text by hand: Lua's own number formatting would print 16 digits in exponent notation.
pub(super) static GRANT: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
local pttl = redis.call('PTTL', KEYS[1])
if pttl ~= -2 then
  return {0, pttl}
end
if redis.call('EXISTS', KEYS[2]) == 0 then
  local now = redis.call('TIME')
  redis.call('SET', KEYS[2], now[1] .. string.format('%06d', tonumber(now[2])))
end
local fence = redis.call('INCR', KEYS[2])
local value = string.format('%.0f', fence) .. ':' .. ARGV[1]
if ARGV[2] == '' then
  redis.call('SET', KEYS[1], value)
else
  redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
end
return {1, fence}
",
    )
});

/// Release: `KEYS[1]` the lease; `ARGV[1]` the holder's `{fence}:{token}`, `ARGV[2]` the
/// release channel. Deletes the lease and wakes the waiters only when it is the holder's;
/// answers 1 then, else 0.
pub(super) static RELEASE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
redis.call('PUBLISH', ARGV[2], '1')
return 1
",
    )
});

/// Refresh: `KEYS[1]` the lease; `ARGV[1]` the holder's `{fence}:{token}`, `ARGV[2]` the new ttl
/// in milliseconds (empty: no expiry). Answers 1 when the lease was the holder's, else 0.
pub(super) static REFRESH: LazyLock<Script> = LazyLock::new(|| {
    Script::new(
        r"
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[2] == '' then
  redis.call('PERSIST', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1
",
    )
});
