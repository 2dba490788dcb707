//! A per-client rate limit: a token bucket per user (`wsse-user`, when a security
//! handler set it) or else per peer IP address.
//!
//! ```toml
//! [handler.rate-limit]
//! per_second = 100        # sustained requests per second per client
//! burst = 200             # requests a client may send at once
//! ```
//!
//! Placed on several workers, each worker keeps its own buckets (a client's limit is then
//! per worker).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

use osprey_soap::{Fault, FaultCode, OSPREY_FAULT_NS};
use osprey_xml::QName;
use serde::Deserialize;

use crate::{ContainerError, Handler, MessageContext, Phase};

/// `[handler.rate-limit]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateSettings {
    /// Sustained requests per second per client.
    pub per_second: f64,
    /// Bucket size: requests a client may send at once.
    pub burst: f64,
}

/// Clients tracked at most; idle full buckets are dropped beyond it.
const MAX_CLIENTS: usize = 100_000;

/// Refuses a client's request with a Sender fault `osprey:RateLimited` once its bucket
/// is empty.
#[derive(Debug)]
pub struct RateLimit {
    settings: RateSettings,
    buckets: Mutex<HashMap<String, (f64, Instant)>>,
}

impl RateLimit {
    /// A limiter for `settings`.
    ///
    /// # Errors
    /// When the rate or the burst is not positive.
    pub fn new(settings: RateSettings) -> Result<Self, String> {
        if !(settings.per_second > 0.0 && settings.burst >= 1.0) {
            return Err("[handler.rate-limit] needs per_second > 0 and burst >= 1".into());
        }
        Ok(RateLimit {
            settings,
            buckets: Mutex::new(HashMap::new()),
        })
    }

    /// Takes one token from `client`'s bucket at `now`; false when it is empty.
    fn take(&self, client: &str, now: Instant) -> bool {
        let RateSettings { per_second, burst } = self.settings;
        let mut buckets = self
            .buckets
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if buckets.len() >= MAX_CLIENTS && !buckets.contains_key(client) {
            buckets.retain(|_, (tokens, at)| {
                *tokens + now.duration_since(*at).as_secs_f64() * per_second < burst
            });
        }
        let (tokens, at) = buckets.entry(client.to_owned()).or_insert((burst, now));
        *tokens = (*tokens + now.duration_since(*at).as_secs_f64() * per_second).min(burst);
        *at = now;
        if *tokens >= 1.0 {
            *tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

impl Handler for RateLimit {
    fn name(&self) -> &str {
        "rate-limit"
    }

    fn phase(&self) -> Phase {
        Phase::Security
    }

    fn inbound(&self, ctx: &mut MessageContext) -> Result<(), ContainerError> {
        let client = match ctx.property(super::WSSE_USER) {
            Some(u) => format!("user:{u}"),
            None => ctx
                .remote
                .map_or_else(|| "unknown".to_owned(), |r| format!("ip:{}", r.ip())),
        };
        if self.take(&client, Instant::now()) {
            Ok(())
        } else {
            Err(ContainerError::from(
                Fault::new(
                    FaultCode::Sender,
                    format!(
                        "rate limit exceeded for {client}: {} requests/s, bursts of {}",
                        self.settings.per_second, self.settings.burst
                    ),
                )
                .with_subcode(QName::new_static(OSPREY_FAULT_NS, "RateLimited")),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_passes_then_the_rate_holds() {
        let r = RateLimit::new(RateSettings {
            per_second: 10.0,
            burst: 3.0,
        })
        .unwrap();
        let t0 = Instant::now();
        assert!((0..3).all(|_| r.take("a", t0)));
        assert!(!r.take("a", t0));
        assert!(r.take("b", t0), "buckets are per client");
        assert!(r.take("a", t0 + Duration::from_millis(100)));
        assert!(!r.take("a", t0 + Duration::from_millis(100)));
    }
}
