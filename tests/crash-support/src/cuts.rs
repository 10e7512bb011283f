//! Connection cuts: the proxy between the workers and the server drops every connection and
//! refuses new ones for [`CUT_FOR`], in the background while the campaign goes on.

use std::sync::Arc;
use std::time::Duration;

use sandloom_test_support::TcpProxy;
use tokio::task::JoinHandle;

use crate::ledger;

/// How long a connection cut lasts.
pub(crate) const CUT_FOR: Duration = Duration::from_millis(300);

/// Cut the proxy for [`CUT_FOR`], in the background, unless a cut is still going on; whether
/// it cut.
pub(crate) fn cut(
    proxy: Option<&Arc<TcpProxy>>,
    cuts: &mut Vec<JoinHandle<()>>,
    at: &mut Vec<u64>,
) -> bool {
    let Some(proxy) = proxy else { return false };
    if cuts.last().is_some_and(|cut| !cut.is_finished()) {
        return false;
    }
    let proxy = Arc::clone(proxy);
    at.push(ledger::now_micros());
    proxy.cut();
    cuts.push(tokio::spawn(async move {
        tokio::time::sleep(CUT_FOR).await;
        proxy.restore();
    }));
    true
}

/// Wait for the last cut to end.
pub(crate) async fn end_cuts(proxy: Option<&Arc<TcpProxy>>, cuts: &mut [JoinHandle<()>]) {
    for cut in cuts.iter_mut() {
        let _ = cut.await;
    }
    if let Some(proxy) = proxy {
        proxy.restore();
    }
}
