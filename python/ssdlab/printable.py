"""Text from a user's file made safe to print: its control characters escaped (``\\x1b``),
so that a terminal shows them instead of obeying them."""

from __future__ import annotations


def escape_controls(text: str, keep: str = "") -> str:
    """``text`` with every character that is not printable written as its escape, but those
    in ``keep`` (a message's line breaks and tabs, say)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() or c in keep else repr(c)[1:-1] for c in text)
