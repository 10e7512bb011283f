//! The built-in lock passes the conformance kit of the `lock` contract.

use sandloom_driverkit::NoOptions;
use sandloom_embedded::MemoryLock;

sandloom_conformance::lock_conformance!(MemoryLock, |_request| NoOptions {});
