//! SNIA IOTTA block-I/O traces in CSV.
//!
//! Source: the SNIA IOTTA repository (<http://iotta.snia.org>). Its block traces come in
//! several layouts; the MSR Cambridge column order (see [`super::msr`]) is the most common
//! one, and it is what this format reads:
//!
//! ```text
//! Timestamp,Hostname,DiskNumber,Type,Offset,Size[,ResponseTime]
//! ```
//!
//! Assumptions, beyond the MSR rules (filetime timestamps in 100 ns ticks, byte offsets and
//! sizes, device = DiskNumber, extra columns ignored):
//!
//! * The first non-blank line may be a header: if its first column is not an unsigned
//!   integer, the line is skipped. Only that line; a non-numeric timestamp later is an
//!   error.
//! * `Type` may also be `R` or `W` (any case), as several re-publications write it.
//!
//! Traces with other layouts (SPC `ASU,LBA,Size,Opcode,Timestamp`, or the Alibaba/Tencent
//! orders) are not this format and will fail on the first line with a field error.

use super::msr::parse_row;
use super::{is_blank, parse_u64, FieldError, Line, Skip};

pub(super) struct SniaParser {
    seen_first_line: bool,
}

impl SniaParser {
    pub(super) fn new() -> Self {
        SniaParser { seen_first_line: false }
    }

    #[inline]
    pub(super) fn parse_line(&mut self, line: &[u8]) -> Result<Line, FieldError> {
        if is_blank(line) {
            return Ok(Line::Skip(Skip::Blank));
        }
        if !self.seen_first_line {
            self.seen_first_line = true;
            let first = line.split(|&b| b == b',').next().unwrap_or_default().trim_ascii();
            if parse_u64(first).is_none() {
                return Ok(Line::Skip(Skip::Header));
            }
        }
        parse_row(line, true).map(Line::Record)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{parse_err, parse_ok, rec};
    use super::super::{TraceFormat, TraceOptions};
    use crate::io::Op;

    const F: TraceFormat = TraceFormat::Snia;

    #[test]
    fn header_is_optional_and_short_types_accepted() {
        let rows = "\n100,host,3,R,4096,8192,5\n200,host,3,w,0,512\n300,host,1,Write,512,512,7\n";
        let want = vec![
            rec(0, 3, Op::Read, 4096, 8192),
            rec(10_000, 3, Op::Write, 0, 512),
            rec(20_000, 1, Op::Write, 512, 512),
        ];
        assert_eq!(parse_ok(F, rows), want);
        let with_header = format!("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime{rows}");
        assert_eq!(parse_ok(F, &with_header), want);
    }

    #[test]
    fn errors_name_line_and_field() {
        let cases: &[(&str, u64, &str, &str)] = &[
            ("Timestamp,Hostname\nTimestamp,Hostname\n", 2, "timestamp", "filetime"),
            ("1,h,0,X,0,512\n", 1, "type", "Read, Write, R or W"),
            ("ts,h\n1,h,0,R,0,0\n", 2, "size", "positive"),
            ("1,h,0,R,0,512\n2,h,0,R,0\n", 2, "size", "missing"),
        ];
        for &(text, line, field, msg) in cases {
            let (_, e) = parse_err(F, TraceOptions::default(), text);
            assert_eq!((e.line, e.field.as_str()), (line, field), "{text:?}: {e}");
            assert!(e.message.contains(msg), "{text:?}: {:?} lacks {msg:?}", e.message);
        }
    }
}
