//! `blkparse` text output, default format.
//!
//! Source: the blktrace/blkparse man pages (blktrace(8), blkparse(1), "DEFAULT OUTPUT"),
//! and blkparse's own default formatter. Every event line starts with the same header:
//!
//! ```text
//! maj,min  cpu  sequence  seconds.nanoseconds  pid  action  rwbs  <action-specific>
//!   8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kworker/3:1H]
//! ```
//!
//! Rules:
//!
//! * Only lines whose action is [`TraceOptions::blkparse_action`](super::TraceOptions)
//!   become records, `Q` by default: a *queued* event is the I/O as its submitter asked
//!   for it, before the block layer merged, split or reordered anything, which is what a
//!   simulator with its own block layer should be fed. (`D`, issued to the driver, would be
//!   the device's view after the real block layer's decisions.)
//! * A line is an event only if it starts with `maj,min` and a CPU number; anything else
//!   (the per-CPU and total summaries blkparse prints at the end, "Throughput", "Events",
//!   "Skips" lines, blank lines) is skipped, never an error. Event lines of other actions
//!   are skipped too.
//! * Time is `seconds.nanoseconds` since tracing started, converted exactly (integer
//!   arithmetic on the digits, no floating point).
//! * `rwbs`: an optional leading `F` is a pre-flush, then one operation letter: `R` read,
//!   `W` write, `D` discard (→ [`Op::Trim`]), `N` no data; later letters (`F` FUA, `A`
//!   read-ahead, `S` sync, `M` metadata, `E` secure erase) are ignored. A pre-flush
//!   without data (`FWS` with no sectors, `FN`, or a lone `F`) is an [`Op::Flush`]; a
//!   pre-flush with data (`FWS 100 + 8`) is just the write (one record a line: the flush
//!   part is dropped). `N` events without pre-flush carry nothing and are skipped.
//! * The address is `sector + nblocks` in 512-byte sectors. An event printed without it
//!   (`[process]` right after rwbs) has no data; a number not followed by `+` is a SCSI
//!   packet command's byte count, not an address, and such events are skipped.
//! * Devices are the `maj,min` pairs, numbered in order of first appearance in a record.

use rustc_hash::FxHashMap;

use super::{
    bad, fields, is_blank, need, num, parse_scaled_decimal, parse_u64, sectors_to_bytes, show, FieldError, Line, Skip,
    TraceRecord,
};
use crate::io::Op;

pub(super) struct BlkparseParser {
    /// The selected action as UTF-8 bytes (a `char` is at most 4).
    action: [u8; 4],
    action_len: usize,
    devices: FxHashMap<(u32, u32), u32>,
}

/// What an event's rwbs says it is.
enum Kind {
    Data(Op),
    Flush,
    Nothing,
}

impl BlkparseParser {
    pub(super) fn new(action: char) -> Self {
        let mut buf = [0u8; 4];
        let action_len = action.encode_utf8(&mut buf).len();
        BlkparseParser { action: buf, action_len, devices: FxHashMap::default() }
    }

    #[inline]
    pub(super) fn parse_line(&mut self, line: &[u8]) -> Result<Line, FieldError> {
        let mut it = fields(line);
        let Some(dev) = it.next().and_then(parse_dev) else { return Ok(Line::Skip(not_an_event(line))) };
        if it.next().is_none_or(|cpu| parse_u64(cpu).is_none()) {
            return Ok(Line::Skip(Skip::NotAnEvent));
        }
        // From here on the line has an event's shape: missing or bad fields are errors.
        let seq = need(&mut it, "sequence", "a sequence number")?;
        let time = need(&mut it, "timestamp", "seconds.nanoseconds")?;
        let pid = need(&mut it, "pid", "a process id")?;
        let action = need(&mut it, "action", "an action letter such as Q, G, I, D or C")?;
        if action != &self.action[..self.action_len] {
            return Ok(Line::Skip(Skip::OtherAction));
        }
        num(seq, "sequence", "a sequence number (unsigned integer)")?;
        let time_ns = parse_scaled_decimal(time, 9).ok_or_else(|| {
            bad(
                "timestamp",
                format!("expected seconds.nanoseconds (e.g. 0.000123456), got \"{}\"", show(time)),
            )
        })?;
        num(pid, "pid", "a process id (unsigned integer)")?;
        let rwbs = need(&mut it, "rwbs", "RWBS flags such as R, WS, D or FWS")?;
        let (preflush, kind) = classify(rwbs)?;

        // The address: "sector + nblocks", or nothing, or a packet command's byte count.
        let (addressed, offset, len) = match it.next() {
            None => (false, 0, 0),
            Some(tok) if tok[0] == b'[' || tok[0] == b'(' => (false, 0, 0),
            Some(tok) => {
                let sector = num(tok, "offset", "a start sector (unsigned integer) or [process]")?;
                if it.next() != Some(b"+") {
                    // "bytes (cdb) [process]": a SCSI packet command, not block I/O.
                    return Ok(Line::Skip(Skip::NoData));
                }
                let n = need(&mut it, "size", "a sector count after '+'")?;
                let n = num(n, "size", "a sector count after '+' (unsigned integer)")?;
                (true, sectors_to_bytes(sector, "offset")?, sectors_to_bytes(n, "size")?)
            }
        };
        let (op, offset, len) = match kind {
            Kind::Data(op) if len > 0 => (op, offset, len),
            Kind::Flush => (Op::Flush, 0, 0),
            Kind::Data(_) if preflush => (Op::Flush, 0, 0),
            // No address printed: a zero-byte request (blkparse omits "sector + 0"); nothing
            // to replay.
            Kind::Data(_) if !addressed => return Ok(Line::Skip(Skip::NoData)),
            Kind::Data(_) => {
                return Err(bad(
                    "size",
                    format!("expected a positive sector count for \"{}\", got 0", show(rwbs)),
                ))
            }
            Kind::Nothing => return Ok(Line::Skip(Skip::NoData)),
        };
        let next = self.devices.len() as u32;
        let device = *self.devices.entry(dev).or_insert(next);
        Ok(Line::Record(TraceRecord { time_ns, device, op, offset, len }))
    }
}

/// A line that does not start with `maj,min`: blank, or something else (a summary, damage).
fn not_an_event(line: &[u8]) -> Skip {
    if is_blank(line) {
        Skip::Blank
    } else {
        Skip::NotAnEvent
    }
}

/// `maj,min` as numbers.
#[inline]
fn parse_dev(tok: &[u8]) -> Option<(u32, u32)> {
    let comma = tok.iter().position(|&b| b == b',')?;
    let maj = u32::try_from(parse_u64(&tok[..comma])?).ok()?;
    let min = u32::try_from(parse_u64(&tok[comma + 1..])?).ok()?;
    Some((maj, min))
}

/// Whether an rwbs string starts with a pre-flush, and the operation it describes.
fn classify(rwbs: &[u8]) -> Result<(bool, Kind), FieldError> {
    let (preflush, rest) = match rwbs {
        [b'F', rest @ ..] => (true, rest),
        _ => (false, rwbs),
    };
    let kind = match rest.first() {
        Some(b'R') => Kind::Data(Op::Read),
        Some(b'W') => Kind::Data(Op::Write),
        Some(b'D') => Kind::Data(Op::Trim),
        Some(b'N') if preflush => Kind::Flush,
        Some(b'N') => Kind::Nothing,
        // A lone "F", or the kernel's own spelling of a flush operation ("F" then flags).
        None | Some(b'F' | b'A' | b'S' | b'M') if preflush => Kind::Flush,
        _ => {
            return Err(bad(
                "rwbs",
                format!(
                    "expected [F] then R, W, D or N, then flags (e.g. R, WS, D, FWS), got \"{}\"",
                    show(rwbs)
                ),
            ))
        }
    };
    Ok((preflush, kind))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{parse, parse_err, parse_ok, rec};
    use super::super::{TraceFormat, TraceOptions};
    use crate::io::Op;

    const F: TraceFormat = TraceFormat::Blkparse;

    const SAMPLE: &str = "\
  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kworker/3:1H]
  8,0    3        2     0.000003542   697  G  WS 3417048 + 8 [kworker/3:1H]
  8,0    3        3     0.000004383   697  P   N [kworker/3:1H]
  8,0    3        4     0.000007069   697  I  WS 3417048 + 8 [kworker/3:1H]
  8,0    3        5     0.000012061   697  D  WS 3417048 + 8 [kworker/3:1H]
  8,16   0        1     0.000101000  1201  Q   R 2048 + 256 [fio]
  8,0    1        1     0.000200000   380  Q FWS [jbd2/sda1-8]
  8,0    1        2     0.000200500   380  Q FWFS 5000 + 16 [jbd2/sda1-8]
  8,16   0        2     0.001000001  1201  Q  DS 4096 + 2048 [fstrim]
  8,0    2        1     0.001500000  1455  Q   R 40 (12 00 00 00 24 00 ..) [scsi_id]
  8,0    2        2     0.001600000  1455  Q   N [scsi_id]
  8,0    2        3     0.001700000  1455  Q  WS [no-address]
  8,0    3        6     0.000515315     0  C  WS 3417048 + 8 [0]
  8,0    0        0     0.002000000     0  m   N cfq697S / alloced
CPU0 (8,0):
 Reads Queued:           1,      128KiB\t Writes Queued:           3,       12KiB
 Read Dispatches:        0,        0KiB\t Write Dispatches:        1,        4KiB

Total (8,0):
 Reads Queued:           1,      128KiB\t Writes Queued:           3,       12KiB

Throughput (R/W): 0KiB/s / 0KiB/s
Events (8,0): 13 entries
Skips: 0 forward (0 -   0.0%)
";

    #[test]
    fn queued_events_only_with_flushes_and_discards() {
        assert_eq!(
            parse_ok(F, SAMPLE),
            vec![
                rec(0, 0, Op::Write, 3_417_048 * 512, 4096),
                rec(101_000, 1, Op::Read, 2048 * 512, 256 * 512),
                rec(200_000, 0, Op::Flush, 0, 0),
                rec(200_500, 0, Op::Write, 5000 * 512, 8192),
                rec(1_000_001, 1, Op::Trim, 4096 * 512, 2048 * 512),
            ]
        );
    }

    #[test]
    fn other_action_can_be_selected() {
        let opts = TraceOptions { blkparse_action: 'D', ..TraceOptions::default() };
        let got: Vec<_> = parse(F, opts, SAMPLE).into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(got, vec![rec(0, 0, Op::Write, 3_417_048 * 512, 4096)]);
        let opts = TraceOptions { blkparse_action: 'C', ..TraceOptions::default() };
        let got: Vec<_> = parse(F, opts, SAMPLE).into_iter().map(|r| r.unwrap()).collect();
        assert_eq!(got, vec![rec(0, 0, Op::Write, 3_417_048 * 512, 4096)]);
    }

    #[test]
    fn errors_name_line_and_field() {
        let head = "  8,0    3        1     0.000000000   697  Q  WS 3417048 + 8 [kw]\n";
        let cases: &[(&str, &str, &str)] = &[
            ("  8,0 3 2 0.0000x0000 697 Q WS 1 + 8 [kw]", "timestamp", "seconds.nanoseconds"),
            ("  8,0 3 2 -1.000000000 697 Q WS 1 + 8 [kw]", "timestamp", "seconds.nanoseconds"),
            ("  8,0 3 x 0.000000001 697 Q WS 1 + 8 [kw]", "sequence", "sequence number"),
            ("  8,0 3 2 0.000000001 pid Q WS 1 + 8 [kw]", "pid", "process id"),
            ("  8,0 3 2 0.000000001 697 Q XS 1 + 8 [kw]", "rwbs", "\"XS\""),
            ("  8,0 3 2 0.000000001 697 Q", "rwbs", "missing"),
            ("  8,0 3 2 0.000000001 697 Q WS abc + 8 [kw]", "offset", "start sector"),
            ("  8,0 3 2 0.000000001 697 Q WS 1 + [kw]", "size", "sector count"),
            ("  8,0 3 2 0.000000001 697 Q WS 1 +", "size", "missing"),
            ("  8,0 3 2 0.000000001 697 Q WS 1 + 0 [kw]", "size", "positive"),
            ("  8,0 3 2", "timestamp", "missing"),
        ];
        for &(bad_line, field, msg) in cases {
            let text = format!("{head}{bad_line}\n{head}");
            let (n, e) = parse_err(F, TraceOptions::default(), &text);
            assert_eq!((n, e.line, e.field.as_str()), (1, 2, field), "{bad_line:?}: {e}");
            assert!(e.message.contains(msg), "{bad_line:?}: {:?} lacks {msg:?}", e.message);
        }
    }
}
