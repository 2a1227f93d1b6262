//! The coordinator <-> worker wire format: length-prefixed binary frames on
//! the worker's standard input and output.

use crate::oracle::{Class, Report, Violation};
use std::io::{self, Read, Write};

/// One case to check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub id: u64,
    /// Also run the `dpopt` binary on it.
    pub cli: bool,
    /// ... with an existing `out.cu` that an error must not clobber.
    pub preexisting_output: bool,
    /// Send the output back (nvcc sample).
    pub keep_output: bool,
    pub bytes: Vec<u8>,
}

/// A checked case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub id: u64,
    pub micros: u64,
    pub report: Report,
}

fn put_u64(w: &mut Vec<u8>, x: u64) {
    w.extend_from_slice(&x.to_le_bytes());
}

fn put_bytes(w: &mut Vec<u8>, b: &[u8]) {
    put_u64(w, b.len() as u64);
    w.extend_from_slice(b);
}

fn get_u64(r: &mut impl Read) -> io::Result<u64> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn get_bytes(r: &mut impl Read) -> io::Result<Vec<u8>> {
    let n = get_u64(r)? as usize;
    if n > 1 << 32 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "frame too large",
        ));
    }
    let mut b = vec![0u8; n];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

impl Request {
    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        let mut buf = Vec::with_capacity(self.bytes.len() + 32);
        put_u64(&mut buf, self.id);
        let flags = self.cli as u64
            | (self.preexisting_output as u64) << 1
            | (self.keep_output as u64) << 2;
        put_u64(&mut buf, flags);
        put_bytes(&mut buf, &self.bytes);
        w.write_all(&buf)?;
        w.flush()
    }

    /// `Ok(None)` at end of input.
    pub fn read(r: &mut impl Read) -> io::Result<Option<Request>> {
        let id = match get_u64(r) {
            Ok(id) => id,
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(e),
        };
        let flags = get_u64(r)?;
        Ok(Some(Request {
            id,
            cli: flags & 1 != 0,
            preexisting_output: flags & 2 != 0,
            keep_output: flags & 4 != 0,
            bytes: get_bytes(r)?,
        }))
    }
}

impl Response {
    pub fn write(&self, w: &mut impl Write) -> io::Result<()> {
        let r = &self.report;
        let mut buf = Vec::new();
        put_u64(&mut buf, self.id);
        put_u64(&mut buf, self.micros);
        put_u64(&mut buf, r.signature);
        put_u64(&mut buf, r.sites as u64);
        put_u64(&mut buf, r.errored as u64);
        put_u64(&mut buf, r.violations.len() as u64);
        for v in &r.violations {
            put_bytes(&mut buf, v.class.name().as_bytes());
            put_bytes(&mut buf, v.detail.as_bytes());
        }
        put_u64(&mut buf, r.features.len() as u64);
        for &f in &r.features {
            buf.extend_from_slice(&f.to_le_bytes());
        }
        match &r.output {
            Some(o) => {
                put_u64(&mut buf, 1);
                put_bytes(&mut buf, o);
            }
            None => put_u64(&mut buf, 0),
        }
        w.write_all(&buf)?;
        w.flush()
    }

    pub fn read(r: &mut impl Read) -> io::Result<Response> {
        let id = get_u64(r)?;
        let micros = get_u64(r)?;
        let signature = get_u64(r)?;
        let sites = get_u64(r)? as u32;
        let errored = get_u64(r)? != 0;
        let n = get_u64(r)?;
        let mut violations = Vec::new();
        for _ in 0..n {
            let class = String::from_utf8_lossy(&get_bytes(r)?).into_owned();
            let class = Class::from_name(&class).ok_or_else(|| invalid("unknown class"))?;
            let detail = String::from_utf8_lossy(&get_bytes(r)?).into_owned();
            violations.push(Violation { class, detail });
        }
        let nf = get_u64(r)? as usize;
        if nf > 1 << 28 {
            return Err(invalid("too many features"));
        }
        let mut raw = vec![0u8; nf * 4];
        r.read_exact(&mut raw)?;
        let features = raw
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        let output = match get_u64(r)? {
            0 => None,
            _ => Some(get_bytes(r)?),
        };
        Ok(Response {
            id,
            micros,
            report: Report {
                violations,
                signature,
                sites,
                errored,
                output,
                features,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip() {
        let req = Request {
            id: 7,
            cli: true,
            preexisting_output: false,
            keep_output: true,
            bytes: b"#pragma dp x\n".to_vec(),
        };
        let mut buf = Vec::new();
        req.write(&mut buf).unwrap();
        assert_eq!(Request::read(&mut buf.as_slice()).unwrap(), Some(req));
        assert_eq!(Request::read(&mut &b""[..]).unwrap(), None);
        let resp = Response {
            id: 7,
            micros: 12,
            report: Report {
                violations: vec![Violation::new(Class::SilentPragma, "x")],
                signature: 3,
                sites: 1,
                errored: false,
                output: Some(b"out".to_vec()),
                features: vec![1, 2, 3],
            },
        };
        let mut buf = Vec::new();
        resp.write(&mut buf).unwrap();
        assert_eq!(Response::read(&mut buf.as_slice()).unwrap(), resp);
    }
}
