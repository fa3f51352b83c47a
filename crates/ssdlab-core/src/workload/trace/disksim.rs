//! DiskSim ASCII traces, and MQSim's variant of them.
//!
//! Sources: the DiskSim 4.0 user manual (Bucy, Schindler, Schlosser, Ganger; CMU-PDL-08-101),
//! "ASCII" input trace format; MQSim (Tavakkol et al., FAST 2018), which reads the same
//! layout for its trace-based workloads.
//!
//! One request a line, whitespace separated:
//!
//! ```text
//! arrival_time  device  start_block  size_in_blocks  flags
//! ```
//!
//! * `arrival_time`: classic DiskSim writes milliseconds as a decimal ("12.5"); MQSim's
//!   traces use integer nanoseconds. The text cannot tell them apart, so the unit comes from
//!   [`TimeUnit`] (default nanoseconds). Decimals are converted exactly in integers; digits
//!   below a nanosecond are dropped. No sign, no exponent.
//! * `device`: used as the record's device number as is.
//! * `start_block`, `size_in_blocks`: 512-byte sectors; the size must be at least 1.
//! * `flags`: bit 0 set means read, clear means write (DiskSim's `READ` flag; MQSim writes
//!   1/0). DiskSim reads the field as hexadecimal; since 10 and 16 are both even, bit 0 is
//!   the same whether the digits are read as hex or decimal, so we accept hex digits with an
//!   optional `0x` and look at bit 0 only. Other bits are ignored.
//! * Fields after the fifth are ignored (DiskSim's `sscanf` does the same); blank lines and
//!   lines starting with `#` are skipped.

use super::{
    bad, fields, need, num, num_u32, parse_scaled_decimal, sectors_to_bytes, show, FieldError, Line, Skip, TimeUnit,
    TraceRecord,
};
use crate::io::Op;

pub(super) struct DiskSimParser {
    /// Decimal digits between the unit and a nanosecond: 0 for ns, 6 for ms.
    scale: u32,
    unit_name: &'static str,
}

impl DiskSimParser {
    pub(super) fn new(unit: TimeUnit) -> Self {
        match unit {
            TimeUnit::Ns => DiskSimParser { scale: 0, unit_name: "nanoseconds" },
            TimeUnit::Ms => DiskSimParser { scale: 6, unit_name: "milliseconds" },
        }
    }

    #[inline]
    pub(super) fn parse_line(&mut self, line: &[u8]) -> Result<Line, FieldError> {
        let mut it = fields(line);
        // No first field: a blank line. A first field starting with '#': a comment.
        let Some(t) = it.next() else { return Ok(Line::Skip(Skip::Blank)) };
        if t[0] == b'#' {
            return Ok(Line::Skip(Skip::Comment));
        }
        let time_ns = parse_scaled_decimal(t, self.scale).ok_or_else(|| {
            bad(
                "timestamp",
                format!(
                    "expected an arrival time in {} (unsigned decimal), got \"{}\"",
                    self.unit_name,
                    show(t)
                ),
            )
        })?;
        let d = need(&mut it, "device", "a device number")?;
        let device = num_u32(d, "device", "a device number (unsigned integer)")?;
        let b = need(&mut it, "offset", "a start sector")?;
        let offset = sectors_to_bytes(num(b, "offset", "a start sector (unsigned integer)")?, "offset")?;
        let s = need(&mut it, "size", "a size in 512-byte sectors")?;
        let sectors = num(s, "size", "a size in 512-byte sectors (unsigned integer)")?;
        if sectors == 0 {
            return Err(bad("size", "expected a positive size in 512-byte sectors, got 0"));
        }
        let len = sectors_to_bytes(sectors, "size")?;
        let f = need(&mut it, "type", "request flags (bit 0: 1 = read, 0 = write)")?;
        let op = if read_bit(f).ok_or_else(|| {
            bad(
                "type",
                format!("expected request flags in hex (bit 0: 1 = read, 0 = write), got \"{}\"", show(f)),
            )
        })? {
            Op::Read
        } else {
            Op::Write
        };
        Ok(Line::Record(TraceRecord { time_ns, device, op, offset, len }))
    }
}

/// Bit 0 of a hexadecimal flags field (optional `0x`), after checking every digit.
#[inline]
fn read_bit(f: &[u8]) -> Option<bool> {
    let digits = f.strip_prefix(b"0x").or_else(|| f.strip_prefix(b"0X")).unwrap_or(f);
    let (&last, _) = digits.split_last()?;
    if !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let v = (last as char).to_digit(16)?;
    Some(v & 1 == 1)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{parse, parse_err, parse_ok, rec};
    use super::super::{TimeUnit, TraceFormat, TraceOptions};
    use crate::io::Op;

    const F: TraceFormat = TraceFormat::DiskSim;

    #[test]
    fn mqsim_style_nanoseconds() {
        let text = "11413000 0 657728 16 1\n11565000 1 31244784 64 0\n\n# note\n11721000\t3  21868784 16 0x3 extra\n";
        assert_eq!(
            parse_ok(F, text),
            vec![
                rec(0, 0, Op::Read, 657_728 * 512, 8192),
                rec(152_000, 1, Op::Write, 31_244_784 * 512, 32768),
                rec(308_000, 3, Op::Read, 21_868_784 * 512, 8192),
            ]
        );
    }

    #[test]
    fn classic_milliseconds_with_fractions() {
        let opts = TraceOptions { disksim_time_unit: TimeUnit::Ms, ..TraceOptions::default() };
        let text = "0.000000 0 303567 7 0\n0.026214 1 55590 6 1\n12.5 2 10 1 a\n13 2 10 1 b\n";
        let got: Vec<_> = parse(F, opts, text).into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(
            got,
            vec![
                rec(0, 0, Op::Write, 303_567 * 512, 7 * 512),
                rec(26_214, 1, Op::Read, 55_590 * 512, 3072),
                rec(12_500_000, 2, Op::Write, 5120, 512),
                rec(13_000_000, 2, Op::Read, 5120, 512),
            ]
        );
    }

    #[test]
    fn errors_name_line_and_field() {
        let cases: &[(&str, u64, &str, &str)] = &[
            ("1 0 0 8 1\n-5 0 0 8 1\n", 2, "timestamp", "nanoseconds"),
            ("1 0 0 8 1\n1e3 0 0 8 1\n", 2, "timestamp", "\"1e3\""),
            ("1 x 0 8 1\n", 1, "device", "device number"),
            ("1 4294967296 0 8 1\n", 1, "device", "at most"),
            ("1 0 0.5 8 1\n", 1, "offset", "start sector"),
            ("1 0 36028797018963968 8 1\n", 1, "offset", "overflow"),
            ("1 0 0 0 1\n", 1, "size", "positive"),
            ("1 0 0 x 1\n", 1, "size", "sectors"),
            ("1 0 0 8 R\n", 1, "type", "bit 0"),
            ("1 0 0 8\n", 1, "type", "missing"),
            ("1 0\n", 1, "offset", "missing"),
        ];
        for &(text, line, field, msg) in cases {
            let (_, e) = parse_err(F, TraceOptions::default(), text);
            assert_eq!((e.line, e.field.as_str()), (line, field), "{text:?}: {e}");
            assert!(e.message.contains(msg), "{text:?}: {:?} lacks {msg:?}", e.message);
        }
        let ms = TraceOptions { disksim_time_unit: TimeUnit::Ms, ..TraceOptions::default() };
        let (_, e) = parse_err(F, ms, "1.x 0 0 8 1\n");
        assert!(e.message.contains("milliseconds"), "{e}");
    }
}
