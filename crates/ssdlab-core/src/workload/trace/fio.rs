//! fio I/O logs (`write_iolog=` / `read_iolog=`), versions 2 and 3.
//!
//! Source: fio's HOWTO, section "Trace file format" (<https://fio.readthedocs.io>), and what
//! fio's `iolog.c` does when it reads one back:
//!
//! * The first line must start with `fio version 2 iolog` or `fio version 3 iolog`
//!   (version 1 has not been readable by fio since 1.20, and is not here either).
//! * **Version 2** lines are `filename action` for file actions (`add`, `open`, `close`) and
//!   `filename action offset length` for I/O actions (`read`, `write`, `trim`, `sync`,
//!   `datasync`, `wait`); offset and length in bytes. There are no timestamps: a
//!   `filename wait N [length]` line delays what follows by `N` microseconds "relative to the
//!   previous wait" (HOWTO), so we keep a running clock that every `wait` advances and give
//!   each I/O the clock's time. (fio's replay code instead compares the `wait` value with
//!   the milliseconds elapsed since fio started, and the HOWTO says waits under 100 µs are
//!   dropped; we follow the documented, cumulative meaning and keep every wait, since the
//!   trace's timing, not fio's sleep granularity, is what a simulator should see.)
//! * **Version 3** (fio 3.31 and later) puts a timestamp before every line:
//!   `timestamp filename action [offset length]`. The timestamp is in **microseconds** since
//!   the start of the run: fio writes it with `utime_since_now()` and, on replay, sleeps for
//!   the difference between consecutive timestamps in microseconds. The HOWTO does not
//!   name the unit; the code does. `wait` is not allowed in version 3 (fio skips it with a
//!   complaint; here it is an error).
//! * `sync` and `datasync` become [`Op::Flush`] (offset and length 0, and their offset and
//!   length fields may be left out); `trim` becomes [`Op::Trim`]. Reads, writes and trims
//!   need an offset and a non-zero length; fields after the length are ignored, as fio's
//!   `sscanf` does.
//! * Devices are the files, numbered in order of first appearance (normally their `add`
//!   lines); a file that is used without an `add` is numbered when first used.
//! * fio has no comment syntax but skips lines it cannot read; we skip blank lines and
//!   lines starting with `#`, and report anything else we cannot read.

use rustc_hash::FxHashMap;

use super::{
    bad, fields, is_blank, is_comment, need, num, show, time_to_ns, FieldError, Fields, Line, Skip, TraceRecord,
};
use crate::io::Op;

const V2_HEADER: &[u8] = b"fio version 2 iolog";
const V3_HEADER: &[u8] = b"fio version 3 iolog";

pub(super) struct FioParser {
    /// 2 or 3 once the header has been read.
    version: u8,
    files: FxHashMap<Vec<u8>, u32>,
    /// Version 2's running clock, advanced by `wait`.
    clock_us: u64,
}

impl FioParser {
    pub(super) fn new() -> Self {
        FioParser { version: 0, files: FxHashMap::default(), clock_us: 0 }
    }

    fn device(&mut self, name: &[u8]) -> u32 {
        if let Some(&d) = self.files.get(name) {
            return d;
        }
        let d = self.files.len() as u32;
        self.files.insert(name.to_vec(), d);
        d
    }

    pub(super) fn finish(&mut self) -> Result<(), FieldError> {
        if self.version == 0 {
            return Err(bad(
                "header",
                "empty file; expected \"fio version 2 iolog\" or \"fio version 3 iolog\"",
            ));
        }
        Ok(())
    }

    pub(super) fn parse_line(&mut self, line: &[u8]) -> Result<Line, FieldError> {
        if self.version == 0 {
            // fio reads the first line and compares its start with the version strings.
            self.version = if line.starts_with(V2_HEADER) {
                2
            } else if line.starts_with(V3_HEADER) {
                3
            } else {
                return Err(bad(
                    "header",
                    format!(
                        "expected \"fio version 2 iolog\" or \"fio version 3 iolog\" on the first line, got \"{}\"",
                        show(line)
                    ),
                ));
            };
            return Ok(Line::Skip(Skip::Header));
        }
        if is_blank(line) {
            return Ok(Line::Skip(Skip::Blank));
        }
        if is_comment(line) {
            return Ok(Line::Skip(Skip::Comment));
        }
        let mut it = fields(line);
        let stamp_us = if self.version == 3 {
            let t = need(&mut it, "timestamp", "microseconds since the start of the run")?;
            Some(num(t, "timestamp", "microseconds since the start of the run (unsigned integer)")?)
        } else {
            None
        };
        let name = need(&mut it, "filename", "a file name")?;
        let action = need(&mut it, "action", "add, open, close, read, write, trim, sync, datasync or wait")?;
        let op = match action {
            b"add" | b"open" | b"close" => {
                if let Some(extra) = it.next() {
                    return Err(bad(
                        "action",
                        format!(
                            "file action \"{}\" takes no offset or length, got \"{}\"",
                            show(action),
                            show(extra)
                        ),
                    ));
                }
                self.device(name);
                return Ok(Line::Skip(Skip::FileAction));
            }
            b"wait" => {
                if self.version == 3 {
                    return Err(bad(
                        "action",
                        "\"wait\" is not allowed in a version 3 iolog (timestamps replace it)",
                    ));
                }
                let t = need(&mut it, "offset", "the wait time in microseconds")?;
                let us = num(t, "offset", "the wait time in microseconds (unsigned integer)")?;
                self.clock_us = self
                    .clock_us
                    .checked_add(us)
                    .ok_or_else(|| bad("offset", "waits add up past 2^64 microseconds"))?;
                return Ok(Line::Skip(Skip::FileAction));
            }
            b"read" => Op::Read,
            b"write" => Op::Write,
            b"trim" => Op::Trim,
            b"sync" | b"datasync" => Op::Flush,
            other => {
                return Err(bad(
                    "action",
                    format!(
                        "expected add, open, close, read, write, trim, sync, datasync or wait, got \"{}\"",
                        show(other)
                    ),
                ))
            }
        };
        let (offset, len) = if op == Op::Flush {
            // fio writes "sync <offset> <length>" but ignores both; accept them or not.
            check_optional_numbers(&mut it)?;
            (0, 0)
        } else {
            let o = need(&mut it, "offset", "a byte offset")?;
            let offset = num(o, "offset", "a byte offset (unsigned integer)")?;
            let l = need(&mut it, "length", "a length in bytes")?;
            let len = num(l, "length", "a length in bytes (unsigned integer)")?;
            if len == 0 {
                return Err(bad("length", format!("expected a positive length for {}, got 0", show(action))));
            }
            (offset, len)
        };
        let time_ns = time_to_ns(stamp_us.unwrap_or(self.clock_us), 1000, "timestamp")?;
        let device = self.device(name);
        Ok(Line::Record(TraceRecord { time_ns, device, op, offset, len }))
    }
}

fn check_optional_numbers(it: &mut Fields<'_>) -> Result<(), FieldError> {
    if let Some(o) = it.next() {
        num(o, "offset", "a byte offset (unsigned integer)")?;
        if let Some(l) = it.next() {
            num(l, "length", "a length in bytes (unsigned integer)")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::{parse_err, parse_ok, rec};
    use super::super::{TraceFormat, TraceOptions};
    use crate::io::Op;

    const F: TraceFormat = TraceFormat::FioIolog;

    #[test]
    fn v2_lines_and_devices_in_order_of_add() {
        let text = "fio version 2 iolog\n\
                    /dev/sdb add\n\
                    /dev/sda add\n\
                    /dev/sdb open\n\
                    /dev/sda open\n\
                    /dev/sda read 4096 8192\n\
                    /dev/sdb write 0 512\n\
                    \n\
                    # a comment\n\
                    /dev/sdb trim 1048576 65536\n\
                    /dev/sda sync 0 0\n\
                    /dev/sdb datasync\n\
                    /dev/sda close\n";
        assert_eq!(
            parse_ok(F, text),
            vec![
                rec(0, 1, Op::Read, 4096, 8192),
                rec(0, 0, Op::Write, 0, 512),
                rec(0, 0, Op::Trim, 1_048_576, 65_536),
                rec(0, 1, Op::Flush, 0, 0),
                rec(0, 0, Op::Flush, 0, 0),
            ]
        );
    }

    #[test]
    fn v2_wait_accumulates_microseconds() {
        let text = "fio version 2 iolog\n\
                    f add\nf open\n\
                    f wait 500 0\n\
                    f read 0 4096\n\
                    f wait 1000 0\n\
                    f read 4096 4096\n\
                    f write 8192 4096\n\
                    f wait 250\n\
                    f wait 250 0\n\
                    f read 0 4096\n";
        let times: Vec<u64> = parse_ok(F, text).iter().map(|r| r.time_ns).collect();
        // The first record is at 500 µs on the trace's clock, so everything shifts by it.
        assert_eq!(times, vec![0, 1_000_000, 1_000_000, 1_500_000]);
    }

    #[test]
    fn v3_timestamps_are_microseconds() {
        let text = "fio version 3 iolog\n\
                    2 /dev/nvme0n1 add\n\
                    872 /dev/nvme0n1 open\n\
                    878 /dev/nvme0n1 write 0 16384\n\
                    888 /dev/nvme0n1 write 16384 16384\n\
                    1891 /dev/nvme0n1 read 0 4096\n\
                    1900 /dev/nvme0n1 sync 0 0\n\
                    10001677 /dev/nvme0n1 close\n";
        assert_eq!(
            parse_ok(F, text),
            vec![
                rec(0, 0, Op::Write, 0, 16384),
                rec(10_000, 0, Op::Write, 16384, 16384),
                rec(1_013_000, 0, Op::Read, 0, 4096),
                rec(1_022_000, 0, Op::Flush, 0, 0),
            ]
        );
    }

    /// If fio is installed, a log it wrote itself (v3, with syncs) reads back fully.
    #[test]
    fn log_written_by_fio_reads_back() {
        let dir = std::env::temp_dir().join(format!("ssdlab-fio-iolog-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("log");
        let run = std::process::Command::new("fio")
            .arg("--name=t")
            .arg(format!("--filename={}", dir.join("data").display()))
            .args(["--size=256k", "--bs=4k", "--rw=randrw", "--ioengine=psync", "--number_ios=32"])
            .args(["--fsync=4", "--output=/dev/null"])
            .arg(format!("--write_iolog={}", log.display()))
            .status();
        match run {
            Ok(s) if s.success() => {}
            _ => {
                println!("skipping: fio not available");
                std::fs::remove_dir_all(&dir).ok();
                return;
            }
        }
        let text = std::fs::read_to_string(&log).unwrap();
        std::fs::remove_dir_all(&dir).ok();
        let recs = parse_ok(F, &text);
        let io_lines = text.lines().filter(|l| [" read ", " write ", " sync "].iter().any(|a| l.contains(a)));
        assert_eq!(recs.len(), io_lines.count(), "{text}");
        assert!(recs.iter().any(|r| r.op == Op::Flush) && recs.iter().any(|r| r.op == Op::Read));
        assert!(recs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
        assert!(recs.iter().all(|r| r.device == 0 && (r.op == Op::Flush || r.len == 4096)));
    }

    fn err(text: &str) -> (usize, u64, String, String) {
        let (n, e) = parse_err(F, TraceOptions::default(), text);
        (n, e.line, e.field, e.message)
    }

    #[test]
    fn errors_name_line_and_field() {
        let cases: &[(&str, u64, &str, &str)] = &[
            ("fio version 1 iolog\n", 1, "header", "fio version 2 iolog"),
            ("", 1, "header", "empty file"),
            ("fio version 2 iolog\nf add\nf read 0\n", 3, "length", "missing"),
            ("fio version 2 iolog\nf add\nf read x 4096\n", 3, "offset", "byte offset"),
            ("fio version 2 iolog\nf add\nf write 0 -1\n", 3, "length", "got \"-1\""),
            ("fio version 2 iolog\nf add\nf write 0 0\n", 3, "length", "positive"),
            ("fio version 2 iolog\nf add\nf append 0 10\n", 3, "action", "\"append\""),
            ("fio version 2 iolog\nf add 0 0\n", 2, "action", "takes no offset"),
            ("fio version 2 iolog\nf wait soon 0\n", 2, "offset", "wait time"),
            ("fio version 2 iolog\nf\n", 2, "action", "missing"),
            ("fio version 2 iolog\nf sync x\n", 2, "offset", "byte offset"),
            ("fio version 3 iolog\n1 f add\nx f read 0 512\n", 3, "timestamp", "microseconds"),
            ("fio version 3 iolog\n1 f add\n5 f wait 10 0\n", 3, "action", "version 3"),
            ("fio version 3 iolog\n1 f add\n5\n", 3, "filename", "missing"),
        ];
        for &(text, line, field, msg) in cases {
            let (_, l, f, m) = err(text);
            assert_eq!((l, f.as_str()), (line, field), "{text:?}: {m}");
            assert!(m.contains(msg), "{text:?}: {m:?} lacks {msg:?}");
        }
    }
}
