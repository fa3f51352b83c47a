//! MSR Cambridge block traces (CSV).
//!
//! Source: D. Narayanan, A. Donnelly, A. Rowstron, "Write Off-Loading: Practical Power
//! Management for Enterprise Storage", FAST 2008, whose one-week traces of 13 servers are
//! published through the SNIA IOTTA repository (<http://iotta.snia.org>, "MSR Cambridge
//! Traces"). One I/O a line, no header:
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime
//! 128166372003061629,wdev,0,Write,3313664,4096,21127
//! ```
//!
//! * `Timestamp`: Windows filetime, 100 ns ticks (since 1601); times become `ticks * 100`
//!   ns, then relative to the first record like every format.
//! * `Hostname`: ignored (any text). `DiskNumber`: the record's device number.
//! * `Type`: `Read` or `Write`, compared without case.
//! * `Offset`, `Size`: bytes; the size must be at least 1.
//! * `ResponseTime` (100 ns ticks) and any further columns are not used and not checked,
//!   so files without the last column read too.
//! * Fields are split on every comma (the traces use no quoting) and spaces around a
//!   field are ignored. Blank lines are skipped.

use super::{bad, is_blank, num, num_u32, show, time_to_ns, FieldError, Line, Skip, TraceRecord};
use crate::io::Op;

const LAYOUT: &str = "comma-separated Timestamp,Hostname,DiskNumber,Type,Offset,Size[,ResponseTime]";

pub(super) struct MsrParser;

impl MsrParser {
    #[inline]
    pub(super) fn parse_line(&mut self, line: &[u8]) -> Result<Line, FieldError> {
        if is_blank(line) {
            return Ok(Line::Skip(Skip::Blank));
        }
        parse_row(line, false).map(Line::Record)
    }
}

/// One CSV row in the MSR column order. `short_types` also accepts `R` and `W` (SNIA).
#[inline]
pub(super) fn parse_row(line: &[u8], short_types: bool) -> Result<TraceRecord, FieldError> {
    // Columns are checked left to right, so the first wrong one is the one reported.
    let mut it = line.split(|&b| b == b',');
    let mut col = |field: &'static str| {
        it.next().map(<[u8]>::trim_ascii).ok_or_else(|| bad(field, format!("missing; expected {LAYOUT}")))
    };
    let ts = col("timestamp")?;
    let ticks = num(ts, "timestamp", "a Windows filetime in 100 ns ticks (unsigned integer)")?;
    let time_ns = time_to_ns(ticks, 100, "timestamp")?;
    col("hostname")?;
    let disk = col("device")?;
    let device = num_u32(disk, "device", "a disk number (unsigned integer)")?;
    let ty = col("type")?;
    let op = if ty.eq_ignore_ascii_case(b"read") || (short_types && ty.eq_ignore_ascii_case(b"r")) {
        Op::Read
    } else if ty.eq_ignore_ascii_case(b"write") || (short_types && ty.eq_ignore_ascii_case(b"w")) {
        Op::Write
    } else {
        let expected = if short_types { "Read, Write, R or W" } else { "Read or Write" };
        return Err(bad("type", format!("expected {expected}, got \"{}\"", show(ty))));
    };
    let off = col("offset")?;
    let offset = num(off, "offset", "a byte offset (unsigned integer)")?;
    let size = col("size")?;
    let len = num(size, "size", "a size in bytes (unsigned integer)")?;
    if len == 0 {
        return Err(bad("size", "expected a positive size in bytes, got 0"));
    }
    Ok(TraceRecord { time_ns, device, op, offset, len })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{parse_err, parse_ok, rec};
    use super::super::{TraceFormat, TraceOptions};
    use crate::io::Op;

    const F: TraceFormat = TraceFormat::Msr;

    #[test]
    fn msr_rows() {
        let text = "128166372003061629,wdev,0,Write,3313664,4096,21127\n\
                    128166372016382155,wdev,2,Read,7014609920,24576,41286\n\
                    \n\
                    128166372026382245, hm , 1 , READ , 512 , 1024\n";
        assert_eq!(
            parse_ok(F, text),
            vec![
                rec(0, 0, Op::Write, 3_313_664, 4096),
                rec(1_332_052_600, 2, Op::Read, 7_014_609_920, 24_576),
                rec(2_332_061_600, 1, Op::Read, 512, 1024),
            ]
        );
    }

    #[test]
    fn errors_name_line_and_field() {
        let ok = "128166372003061629,wdev,0,Write,3313664,4096,21127\n";
        let cases: &[(&str, &str, &str)] = &[
            ("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime", "timestamp", "filetime"),
            ("12.5,wdev,0,Write,0,4096,1", "timestamp", "\"12.5\""),
            ("1,wdev,zero,Write,0,4096,1", "device", "disk number"),
            ("1,wdev,0,R,0,4096,1", "type", "Read or Write"),
            ("1,wdev,0,Write,-4,4096,1", "offset", "byte offset"),
            ("1,wdev,0,Write,0,0,1", "size", "positive"),
            ("1,wdev,0,Write,0,4k,1", "size", "\"4k\""),
            ("1,wdev,0,Write,0", "size", "missing"),
            ("1,wdev", "device", "missing"),
        ];
        for &(bad_line, field, msg) in cases {
            let text = format!("{ok}{ok}{bad_line}\n{ok}");
            let (n, e) = parse_err(F, TraceOptions::default(), &text);
            assert_eq!((n, e.line, e.field.as_str()), (2, 3, field), "{bad_line:?}: {e}");
            assert!(e.message.contains(msg), "{bad_line:?}: {:?} lacks {msg:?}", e.message);
        }
    }
}
