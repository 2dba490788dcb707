//! A compact frame: named fields and a body, for one hop of a message context.
//!
//! Layout: `u32` field count, then per field `u16` name length, name, `u32` value length,
//! value; then the body, to the end. Lengths are big-endian. The body (the SOAP message
//! as received) is carried as it is, never re-serialised.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use thiserror::Error;

/// Fields and a body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Frame {
    /// Named values, in order (a name may repeat).
    pub fields: Vec<(String, Bytes)>,
    /// The body.
    pub body: Bytes,
}

/// A frame that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("malformed frame: {0}")]
pub struct FrameError(&'static str);

/// Most fields a frame may carry.
pub const MAX_FIELDS: usize = 4096;

impl Frame {
    /// An empty frame with `body`.
    pub fn new(body: Bytes) -> Self {
        Frame {
            fields: Vec::new(),
            body,
        }
    }

    /// Adds a field.
    pub fn push(&mut self, name: &str, value: impl Into<Bytes>) {
        self.fields.push((name.to_owned(), value.into()));
    }

    /// The first value of `name`.
    pub fn get(&self, name: &str) -> Option<&Bytes> {
        self.fields.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// The first value of `name` as UTF-8 text.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(|v| std::str::from_utf8(v).ok())
    }

    /// Every value of `name`, in order.
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Bytes> + 'a {
        self.fields
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The frame's bytes.
    ///
    /// # Panics
    /// When a name is longer than 65,535 bytes or a value longer than 4 GiB.
    pub fn encode(&self) -> Bytes {
        let size: usize = 4
            + self
                .fields
                .iter()
                .map(|(n, v)| 6 + n.len() + v.len())
                .sum::<usize>()
            + self.body.len();
        let mut b = BytesMut::with_capacity(size);
        b.put_u32(u32::try_from(self.fields.len()).unwrap_or(u32::MAX));
        for (n, v) in &self.fields {
            #[allow(clippy::expect_used)] // names are the program's own constants
            b.put_u16(u16::try_from(n.len()).expect("a frame field name over 64 KiB"));
            b.put_slice(n.as_bytes());
            #[allow(clippy::expect_used)] // bounded by the message size limit
            b.put_u32(u32::try_from(v.len()).expect("a frame field over 4 GiB"));
            b.put_slice(v);
        }
        b.put_slice(&self.body);
        b.freeze()
    }

    /// Reads a frame; field values and the body share `bytes` (no copy).
    ///
    /// # Errors
    /// [`FrameError`] when a length runs past the end or a name is not UTF-8.
    pub fn decode(mut bytes: Bytes) -> Result<Frame, FrameError> {
        if bytes.remaining() < 4 {
            return Err(FrameError("shorter than its field count"));
        }
        let count = bytes.get_u32() as usize;
        if count > MAX_FIELDS {
            return Err(FrameError("too many fields"));
        }
        let mut fields = Vec::with_capacity(count);
        for _ in 0..count {
            if bytes.remaining() < 2 {
                return Err(FrameError("field name length missing"));
            }
            let n = usize::from(bytes.get_u16());
            if bytes.remaining() < n + 4 {
                return Err(FrameError("field name runs past the end"));
            }
            let name = std::str::from_utf8(&bytes[..n])
                .map_err(|_| FrameError("field name is not UTF-8"))?
                .to_owned();
            bytes.advance(n);
            let len = bytes.get_u32() as usize;
            if bytes.remaining() < len {
                return Err(FrameError("field value runs past the end"));
            }
            fields.push((name, bytes.split_to(len)));
        }
        Ok(Frame {
            fields,
            body: bytes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_bad_lengths_are_refused() {
        let mut f = Frame::new(Bytes::from_static(b"<e/>"));
        f.push("path", "/wstest");
        f.push("understood", Bytes::from_static(&[0, 1]));
        f.push("path", "");
        let bytes = f.encode();
        let back = Frame::decode(bytes.clone()).unwrap();
        assert_eq!(back, f);
        assert_eq!(back.text("path"), Some("/wstest"));
        assert_eq!(back.all("path").count(), 2);
        for cut in 0..bytes.len() - 4 {
            // Every prefix that cuts a field is refused, and none panics.
            assert!(Frame::decode(bytes.slice(..cut)).is_err(), "prefix {cut}");
        }
        assert!(Frame::decode(Bytes::from_static(&[255, 255, 255, 255])).is_err());
    }
}
