//! WS-Security 1.0 UsernameToken verification (OASIS Username Token Profile 1.0):
//! `PasswordDigest` (`Base64(SHA-1(nonce + created + password))`) or `PasswordText`,
//! a nonce cache against replays, and freshness of `wsu:Created` and `wsu:Timestamp`.
//!
//! ```toml
//! [handler.wsse-username]
//! users = { alice = "secret" }
//! freshness = "5m"        # how old a Created may be (and how long nonces are kept)
//! allow_text = true       # accept PasswordText (over TLS only, in production)
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use osprey_binding::DateTime;
use osprey_soap::{Fault, FaultCode};
use osprey_xml::{QName, XmlReader};
use serde::Deserialize;
use sha1::{Digest, Sha1};

use crate::{ContainerError, Handler, MessageContext, Phase};

/// The WS-Security 1.0 `wsse` namespace.
pub const WSSE_NS: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
/// The WS-Security utility (`wsu`) namespace.
pub const WSU_NS: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
const PASSWORD_DIGEST: &str = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest";
const PASSWORD_TEXT: &str = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordText";

/// The property holding the authenticated user name.
pub const WSSE_USER: &str = "wsse-user";

const SECURITY: QName = QName::new_static(WSSE_NS, "Security");
/// Nonces kept at most (the oldest are forgotten first beyond this).
const MAX_NONCES: usize = 100_000;

/// `[handler.wsse-username]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WsseSettings {
    /// User name -> password.
    pub users: HashMap<String, String>,
    /// How old a `Created` may be, and how long a nonce is remembered (`"5m"`).
    #[serde(default = "default_freshness")]
    pub freshness: String,
    /// Accept `PasswordText` tokens.
    #[serde(default = "default_true")]
    pub allow_text: bool,
}

fn default_freshness() -> String {
    "5m".into()
}

fn default_true() -> bool {
    true
}

/// Verifies the UsernameToken of each request; sets property `wsse-user`.
pub struct UsernameToken {
    users: HashMap<String, String>,
    freshness: Duration,
    allow_text: bool,
    /// Nonces seen within the freshness window, oldest first.
    nonces: Mutex<NonceCache>,
}

/// Nonces seen (nonce -> when) and the order they came in.
type NonceCache = (HashMap<String, i64>, VecDeque<(i64, String)>);

impl std::fmt::Debug for UsernameToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UsernameToken")
            .field("users", &self.users.len())
            .field("freshness", &self.freshness)
            .finish_non_exhaustive()
    }
}

/// A WS-Security fault: Sender, with the spec's QName as subcode.
fn fault(local: &'static str, reason: &str) -> ContainerError {
    ContainerError::from(
        Fault::new(FaultCode::Sender, reason).with_subcode(QName::new_static(WSSE_NS, local)),
    )
}

fn failed() -> ContainerError {
    // One message for every credential failure: nothing tells an attacker which part
    // was wrong (WS-Security 1.0 §12).
    fault(
        "FailedAuthentication",
        "The security token could not be authenticated or authorized",
    )
}

/// What a UsernameToken carried.
#[derive(Debug, Default)]
struct Token {
    username: String,
    password: String,
    password_type: String,
    nonce: Option<String>,
    created: Option<String>,
}

#[derive(Debug, Default)]
struct SecurityHeader {
    token: Option<Token>,
    expires: Option<String>,
}

fn read_security(r: &mut XmlReader<'_>) -> Result<SecurityHeader, osprey_xml::XmlError> {
    let mut h = SecurityHeader::default();
    r.next_child()?; // wsse:Security itself
    while let Some(child) = r.next_child()? {
        if child.is(WSSE_NS, "UsernameToken") {
            let mut t = Token::default();
            while let Some(e) = r.next_child()? {
                if e.is(WSSE_NS, "Username") {
                    t.username = r.read_text()?.trim().to_owned();
                } else if e.is(WSSE_NS, "Password") {
                    t.password_type = r.attribute("", "Type").unwrap_or(PASSWORD_TEXT).to_owned();
                    t.password = r.read_text()?.into_owned();
                } else if e.is(WSSE_NS, "Nonce") {
                    t.nonce = Some(r.read_text()?.trim().to_owned());
                } else if e.is(WSU_NS, "Created") {
                    t.created = Some(r.read_text()?.trim().to_owned());
                } else {
                    r.skip_element()?;
                }
            }
            h.token = Some(t);
        } else if child.is(WSU_NS, "Timestamp") {
            while let Some(e) = r.next_child()? {
                if e.is(WSU_NS, "Expires") {
                    h.expires = Some(r.read_text()?.trim().to_owned());
                } else {
                    r.skip_element()?;
                }
            }
        } else {
            r.skip_element()?;
        }
    }
    Ok(h)
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

fn epoch_ms(t: &DateTime) -> i64 {
    t.unix_seconds() * 1000 + i64::from(t.nanos / 1_000_000)
}

impl UsernameToken {
    /// A verifier for `settings`.
    ///
    /// # Errors
    /// When there are no users or the freshness is not a duration.
    pub fn new(settings: WsseSettings) -> Result<Self, String> {
        if settings.users.is_empty() {
            return Err("[handler.wsse-username] users is empty".into());
        }
        let freshness = crate::parse_duration(&settings.freshness)
            .filter(|d| !d.is_zero())
            .ok_or_else(|| format!("freshness {:?} is not a duration", settings.freshness))?;
        Ok(UsernameToken {
            users: settings.users,
            freshness,
            allow_text: settings.allow_text,
            nonces: Mutex::new((HashMap::new(), VecDeque::new())),
        })
    }

    /// Checks `token` at time `now` (epoch ms).
    fn verify(&self, token: &Token, now: i64) -> Result<(), ContainerError> {
        let window = i64::try_from(self.freshness.as_millis()).unwrap_or(i64::MAX);
        let Some(expected) = self.users.get(&token.username) else {
            return Err(failed());
        };
        if let Some(created) = &token.created {
            let t = DateTime::parse(created)
                .ok_or_else(|| fault("InvalidSecurity", "wsu:Created is not an xsd:dateTime"))?;
            let t = epoch_ms(&t);
            // A minute of clock skew either way.
            if t > now + 60_000 || now - t > window {
                return Err(fault(
                    "MessageExpired",
                    "The message has expired: its UsernameToken Created is outside the freshness window",
                ));
            }
        }
        if token.password_type == PASSWORD_DIGEST {
            let (Some(nonce), Some(created)) = (&token.nonce, &token.created) else {
                return Err(fault(
                    "InvalidSecurity",
                    "a PasswordDigest needs a Nonce and a wsu:Created",
                ));
            };
            let raw_nonce = base64::engine::general_purpose::STANDARD
                .decode(nonce)
                .map_err(|_| fault("InvalidSecurity", "the Nonce is not base64"))?;
            let mut h = Sha1::new();
            h.update(&raw_nonce);
            h.update(created.as_bytes());
            h.update(expected.as_bytes());
            let digest = base64::engine::general_purpose::STANDARD.encode(h.finalize());
            if !constant_time_eq(digest.as_bytes(), token.password.trim().as_bytes()) {
                return Err(failed());
            }
        } else if token.password_type == PASSWORD_TEXT {
            if !self.allow_text {
                return Err(fault(
                    "UnsupportedSecurityToken",
                    "PasswordText is not accepted here: send a PasswordDigest",
                ));
            }
            if !constant_time_eq(expected.as_bytes(), token.password.as_bytes()) {
                return Err(failed());
            }
        } else {
            return Err(fault(
                "UnsupportedSecurityToken",
                "unknown Password Type (PasswordDigest and PasswordText are supported)",
            ));
        }
        // A nonce is accepted once within the window (checked last: a bad password does
        // not burn a nonce).
        if let Some(nonce) = &token.nonce {
            let mut guard = self
                .nonces
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let (seen, order) = &mut *guard;
            while let Some((t, n)) = order.front() {
                if now - t <= window && order.len() < MAX_NONCES {
                    break;
                }
                seen.remove(n);
                order.pop_front();
            }
            if seen.contains_key(nonce) {
                return Err(failed());
            }
            seen.insert(nonce.clone(), now);
            order.push_back((now, nonce.clone()));
        }
        Ok(())
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

static UNDERSTANDS: [QName; 1] = [SECURITY];

impl Handler for UsernameToken {
    fn name(&self) -> &str {
        "wsse-username"
    }

    fn phase(&self) -> Phase {
        Phase::Security
    }

    fn understands(&self) -> &[QName] {
        &UNDERSTANDS
    }

    fn inbound(&self, ctx: &mut MessageContext) -> Result<(), ContainerError> {
        let Some(i) = ctx.envelope.headers.iter().position(|h| h.name == SECURITY) else {
            return Err(fault(
                "InvalidSecurity",
                "this service requires a wsse:Security header with a UsernameToken",
            ));
        };
        let header = {
            let mut r = ctx
                .envelope
                .header_reader(i, &ctx.bytes, &ctx.limits)
                .map_err(|_| fault("InvalidSecurity", "the wsse:Security header is malformed"))?;
            read_security(&mut r)
                .map_err(|_| fault("InvalidSecurity", "the wsse:Security header is malformed"))?
        };
        let now = now_ms();
        if let Some(expires) = &header.expires {
            let t = DateTime::parse(expires)
                .ok_or_else(|| fault("InvalidSecurity", "wsu:Expires is not an xsd:dateTime"))?;
            if epoch_ms(&t) + 60_000 < now {
                return Err(fault("MessageExpired", "The message has expired"));
            }
        }
        let Some(token) = header.token else {
            return Err(fault(
                "InvalidSecurity",
                "the wsse:Security header holds no UsernameToken",
            ));
        };
        self.verify(&token, now)?;
        ctx.understood[i] = true;
        ctx.set_property(WSSE_USER, token.username);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handler() -> UsernameToken {
        UsernameToken::new(WsseSettings {
            users: HashMap::from([("alice".to_owned(), "secret".to_owned())]),
            freshness: "5m".into(),
            allow_text: false,
        })
        .unwrap()
    }

    fn digest_token(password: &str, nonce: &[u8], created: &str) -> Token {
        let mut h = Sha1::new();
        h.update(nonce);
        h.update(created.as_bytes());
        h.update(password.as_bytes());
        Token {
            username: "alice".into(),
            password: base64::engine::general_purpose::STANDARD.encode(h.finalize()),
            password_type: PASSWORD_DIGEST.into(),
            nonce: Some(base64::engine::general_purpose::STANDARD.encode(nonce)),
            created: Some(created.into()),
        }
    }

    fn subcode(e: ContainerError) -> String {
        Fault::from(&e)
            .subcode
            .map(|q| q.local().to_owned())
            .unwrap_or_default()
    }

    #[test]
    fn digest_is_checked_nonces_are_used_once_and_old_tokens_expire() {
        let h = handler();
        let now = 1_800_000_000_000;
        let created = DateTime::from_unix(now / 1000, 0).to_string();
        h.verify(&digest_token("secret", b"n1", &created), now)
            .unwrap();
        // The same nonce again: a replay.
        assert_eq!(
            subcode(
                h.verify(&digest_token("secret", b"n1", &created), now)
                    .unwrap_err()
            ),
            "FailedAuthentication"
        );
        assert_eq!(
            subcode(
                h.verify(&digest_token("wrong", b"n2", &created), now)
                    .unwrap_err()
            ),
            "FailedAuthentication"
        );
        // A wrong password did not burn n2.
        h.verify(&digest_token("secret", b"n2", &created), now)
            .unwrap();
        let old = DateTime::from_unix(now / 1000 - 301, 0).to_string();
        assert_eq!(
            subcode(
                h.verify(&digest_token("secret", b"n3", &old), now)
                    .unwrap_err()
            ),
            "MessageExpired"
        );
        // Past the window, a nonce is forgotten (its Created would be refused anyway).
        let later = now + 301_000;
        let created_later = DateTime::from_unix(later / 1000, 0).to_string();
        h.verify(&digest_token("secret", b"n1", &created_later), later)
            .unwrap();
    }

    #[test]
    fn password_text_is_refused_when_not_allowed() {
        let t = Token {
            username: "alice".into(),
            password: "secret".into(),
            password_type: PASSWORD_TEXT.into(),
            ..Token::default()
        };
        assert_eq!(
            subcode(handler().verify(&t, 0).unwrap_err()),
            "UnsupportedSecurityToken"
        );
    }
}
