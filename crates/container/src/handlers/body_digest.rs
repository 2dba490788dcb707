//! SHA-256 of the message's Body content, left as a property and returned as a header.

use sha2::{Digest, Sha256};

use crate::{ContainerError, Handler, MessageContext, Phase};

/// The property holding the hex digest.
pub const BODY_SHA256: &str = "body-sha256";

/// Namespace of the `BodyDigest` response header.
pub const HANDLERS_NS: &str = "urn:osprey:handlers";

/// Computes the SHA-256 digest of the payload as received (from its start tag to its end
/// tag), sets property `body-sha256`, and adds
/// `<h:BodyDigest algorithm="sha256">hex</h:BodyDigest>` to the response headers (once,
/// however many digest handlers the chain holds).
#[derive(Debug)]
pub struct BodyDigest {
    rounds: u32,
}

impl Default for BodyDigest {
    fn default() -> Self {
        BodyDigest { rounds: 1 }
    }
}

/// `[handler.body-digest]`.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DigestSettings {
    /// Hash the digest again this many times (1 by default): a work factor for
    /// experiments that need a CPU-heavy handler.
    #[serde(default = "one")]
    pub rounds: u32,
}

fn one() -> u32 {
    1
}

impl BodyDigest {
    /// A digest handler for `settings`.
    ///
    /// # Errors
    /// When `rounds` is 0.
    pub fn new(settings: &DigestSettings) -> Result<Self, String> {
        if settings.rounds == 0 {
            return Err("[handler.body-digest] rounds must be at least 1".into());
        }
        Ok(BodyDigest {
            rounds: settings.rounds,
        })
    }
}

/// The payload's bytes: from its start tag to the end of the message, less the closing
/// `Body` and `Envelope` tags (the envelope decoder checked that only they follow).
fn payload_bytes(ctx: &MessageContext) -> &[u8] {
    let Some(p) = &ctx.envelope.payload else {
        return &[];
    };
    let mut end = ctx.bytes.len();
    for _ in 0..2 {
        end = ctx.bytes[..end]
            .windows(2)
            .rposition(|w| w == b"</")
            .unwrap_or(p.start);
    }
    let body = &ctx.bytes[p.start.min(end)..end];
    let trimmed = body
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(0, |i| i + 1);
    &body[..trimmed]
}

fn hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

impl Handler for BodyDigest {
    fn name(&self) -> &str {
        "body-digest"
    }

    fn phase(&self) -> Phase {
        Phase::Security
    }

    fn idempotent(&self) -> bool {
        true
    }

    fn inbound(&self, ctx: &mut MessageContext) -> Result<(), ContainerError> {
        let mut sum = Sha256::digest(payload_bytes(ctx));
        for _ in 1..self.rounds {
            sum = Sha256::digest(sum);
        }
        let digest = hex(&sum);
        if ctx.property(BODY_SHA256).is_none() {
            let mut w = osprey_xml::XmlWriter::with_capacity(160);
            w.start_prefixed("h", "BodyDigest");
            w.declare("h", HANDLERS_NS);
            w.attribute("algorithm", "sha256");
            w.text(&digest);
            w.end();
            ctx.response_headers.push(w.into_bytes());
        }
        ctx.set_property(BODY_SHA256, digest);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lowercase_pairs() {
        assert_eq!(hex(&[0x00, 0xab, 0x0f]), "00ab0f");
    }
}
