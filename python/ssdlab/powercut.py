"""What a power cut lost, told in words: per device the acknowledged bytes held only in
volatile memory, the page cache's dirty bytes, and per file system where the losses fell and
what journal recovery makes of them. The text reports print the lines; the HTML reports
show the devices as a table and each file system's lines as a list."""

from __future__ import annotations

from typing import Any

from .units import format_bytes


def power_cut_lines(cut: dict) -> list[str]:
    """What a power cut lost: per device, the acknowledged bytes held only in volatile
    memory, and those a completed cache flush had covered (an fsync's promise, broken)."""
    lines = [f"Power cut at {cut['at_ns'] / 1e9:.3f} s (ssdlab): what was acknowledged and held only in volatile memory"]

    def device(d: dict, indent: str) -> None:
        promised = (f"; {format_bytes(d['promised_bytes'])} of it covered by {d['broken_flushes']} cache flush(es) "
                    "already acknowledged (fsync's promise broken)" if d["promised_bytes"] else "")
        lines.append(f"{indent}{d['name']}: {format_bytes(d['volatile_bytes'])} lost{promised}")
        for m in d["members"]:
            device(m, indent + "  ")

    for d in cut["devices"]:
        device(d, "  ")
    if cut["page_cache_dirty_bytes"] is not None:
        lines.append(f"  page cache: {format_bytes(cut['page_cache_dirty_bytes'])} dirty, never written "
                     "(lost, as POSIX allows before an fsync)")
    for f in cut.get("file_systems", []):
        lines.extend(_fs_cut_lines(f))
    return lines


def _fs_cut_lines(f: dict) -> list[str]:
    """Where one file system's losses fell, and what journal recovery makes of them."""
    head = f"  file system on {f['target']}:"
    if not f["located"]:
        return [f"{head} the target cannot say where its losses lie (an array's members lost "
                "cached data); files not attributed",
                f"    {f['uncommitted_blocks']} metadata blocks of transactions not yet committed"]
    lines = [head]
    data = f"    data: {f['data_files']} file(s) lost {format_bytes(f['data_bytes'])} written back"
    if f["promised_files"]:
        data += (f"; {f['promised_files']} of them had returned from fsync "
                 f"({format_bytes(f['promised_bytes'])}; inodes {', '.join(map(str, f['promised_examples']))}"
                 f"{' …' if f['promised_files'] > len(f['promised_examples']) else ''})")
    lines.append(data)
    if f["freed_bytes"]:
        lines.append(f"    {format_bytes(f['freed_bytes'])} were writes to blocks freed since (no loss)")
    journal = (f"    journal: {f['journal_blocks']} log block(s) lost; {f['transactions_broken']} committed "
               f"transaction(s) broken")
    if f["transactions_not_replayed"]:
        journal += (f"; recovery stops at transaction {f['first_not_replayed']}: "
                    f"{f['transactions_not_replayed']} committed transaction(s) ({f['not_replayed_blocks']} "
                    "metadata blocks) are not replayed, and what they did is undone")
    lines.append(journal)
    if f["uncommitted_blocks"]:
        lines.append(f"    {f['uncommitted_blocks']} metadata block(s) of transactions not yet committed "
                     "(never acknowledged as durable)")
    if f["metadata_blocks"]:
        lost = f["metadata_blocks"] - f["metadata_recovered"]
        line = (f"    metadata at home: {f['metadata_blocks']} block(s) lost, {f['metadata_recovered']} "
                "restored by the journal's replay")
        if lost:
            line += (f"; {lost} not: {f['inodes_damaged']} inode(s), {f['directories_damaged']} "
                     f"directory(ies), {f['mappings_damaged']} file map(s), {f['bitmaps_damaged']} bitmap(s), "
                     f"{f['super_damaged']} superblock/descriptor block(s)")
        lines.append(line)
    if f["dirty_files"]:
        lines.append(f"    page cache: {f['dirty_files']} file(s) with {format_bytes(f['dirty_bytes'])} "
                     "dirty, never written")
    if f["data_writeback"]:
        stale = f"    data=writeback: {f['stale_files']} file(s) recovered mapping {format_bytes(f['stale_bytes'])} never written"
        if f["stale_files"]:
            stale += (" (they read as whatever those blocks held before, perhaps another file's old data; inodes "
                      f"{', '.join(map(str, f['stale_examples']))}{' …' if f['stale_files'] > len(f['stale_examples']) else ''})")
        lines.append(stale)
    lines.append("    e2fsck: " + ("has metadata to repair" if f["fsck_needed"]
                                    else "journal replay leaves the file system consistent"))
    return lines


def device_rows(cut: dict) -> list[list[str]]:
    """One row per device (members indented under their array): lost, the part of it a
    completed cache flush had covered, and the flushes whose promise broke."""
    rows: list[list[str]] = []

    def add(d: dict, depth: int) -> None:
        rows.append(["\u2003" * depth + d["name"], format_bytes(d["volatile_bytes"]),
                     format_bytes(d["promised_bytes"]), str(d["broken_flushes"])])
        for m in d["members"]:
            add(m, depth + 1)

    for d in cut["devices"]:
        add(d, 0)
    return rows


def html_view(cut: dict) -> dict[str, Any]:
    """The power cut for an HTML page: when, the devices' table, the page cache's line, and
    per file system its heading and lines."""
    page_cache = (None if cut["page_cache_dirty_bytes"] is None else
                  f"Page cache: {format_bytes(cut['page_cache_dirty_bytes'])} dirty, never written "
                  "(lost, as POSIX allows before an fsync).")
    file_systems = []
    for f in cut.get("file_systems", []):
        head, *lines = _fs_cut_lines(f)
        file_systems.append({"heading": head.strip().rstrip(":"), "lines": [ln.strip() for ln in lines]})
    return {"at_s": f"{cut['at_ns'] / 1e9:.3f}",
            "devices": {"header": ["device", "acknowledged and lost", "of it covered by a completed cache flush",
                                   "cache flushes broken"], "rows": device_rows(cut), "cls": "power-cut"},
            "page_cache": page_cache, "file_systems": file_systems}
