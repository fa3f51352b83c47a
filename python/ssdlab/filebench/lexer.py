"""Tokens of filebench's Workload Model Language, each with its line.

The token forms are filebench's (its lexer, ``parser_lex.l`` in filebench 1.5): whole numbers
with an optional ``k``, ``m`` or ``g`` (lower case: 1024, 1024², 1024³), ``$name`` variables,
quoted text, words (names, paths, keywords: a letter, ``/`` or ``-``, then letters, digits and
``/._:;-``), the marks ``{ } ( ) = ,`` and ``#`` comments to the end of the line. Line ends
are plain white space: a statement may go on over several lines (after a comma, say).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import FilebenchError

#: filebench's multipliers: ``KB``, ``MB``, ``GB`` in its ``filebench.h`` are 1024, 1024², 1024³.
SUFFIX = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}

#: filebench reads numbers with strtoll: at most 2^63 - 1
INT_MAX = 2**63 - 1

_INT = re.compile(r"[0-9]+([kmg]?)")
_NEGINT = re.compile(r"-[0-9]+")
_WORD = re.compile(r"[/A-Za-z_-][/A-Za-z0-9._:;-]*")
_VAR = re.compile(r"\$(?:\{([A-Za-z][A-Za-z0-9_]*)\}|\(([A-Za-z][A-Za-z0-9_]*)\)|([A-Za-z][A-Za-z0-9_]*))")
_PUNCT = set("{}()=,")


@dataclass(frozen=True)
class Token:
    kind: str  # "int", "word", "var", "quoted", or the mark itself: "{", "}", "(", ")", "=", ","
    value: object  # int for "int"; the text otherwise (a variable's name without "$")
    line: int
    text: str  # as written


def tokenize(text: str, path: str = "<string>") -> list[Token]:
    """The tokens of ``text``; a character filebench's lexer would not accept raises
    :class:`FilebenchError` at its line."""
    out: list[Token] = []
    line = 1
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c in _PUNCT:
            out.append(Token(c, c, line, c))
            i += 1
            continue
        if c == '"':
            j = i + 1
            buf = []
            while j < n and text[j] != '"':
                if text[j] == "\n":
                    raise FilebenchError("unterminated quoted text (a quote opened on this line is not closed)",
                                         path=path, line=line)
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '$"\\':
                    buf.append("\\" + text[j + 1] if text[j + 1] == "$" else text[j + 1])
                    j += 2
                    continue
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "n":
                    buf.append("\n")
                    j += 2
                    continue
                buf.append(text[j])
                j += 1
            if j >= n:
                raise FilebenchError("unterminated quoted text", path=path, line=line)
            raw = "".join(buf)
            out.append(Token("quoted", raw, line, text[i:j + 1]))
            i = j + 1
            continue
        if c == "$":
            m = _VAR.match(text, i)
            if not m:
                raise FilebenchError(f"'$' must be followed by a variable name ({text[i:i + 12].split()[0]!r})",
                                     path=path, line=line)
            name = m.group(1) or m.group(2) or m.group(3)
            out.append(Token("var", name, line, m.group(0)))
            i = m.end()
            continue
        # numbers and words: the longest match wins, a number on a tie (as in flex, whose
        # number rules come first)
        cands = []
        for kind, rx in (("int", _INT), ("negint", _NEGINT), ("word", _WORD)):
            m = rx.match(text, i)
            if m:
                cands.append((m.end() - i, kind, m))
        if not cands:
            shown = c if c.isprintable() else repr(c)
            raise FilebenchError(f"illegal character '{shown}'", path=path, line=line)
        length = max(c_[0] for c_ in cands)
        _, kind, m = next(c_ for c_ in cands if c_[0] == length)
        tok_text = m.group(0)
        if kind in ("int", "negint") and m.end() < n and (text[m.end()].isalnum() or text[m.end()] == "."):
            j = m.end()
            while j < n and (text[j].isalnum() or text[j] in "._"):
                j += 1
            raise FilebenchError(f"'{text[i:j]}': filebench reads whole numbers, with k, m or g (lower case) "
                                 "for 1024, 1024² or 1024³", path=path, line=line)
        if kind == "int":
            digits = tok_text.rstrip("kmg")
            value = int(digits) * SUFFIX[m.group(1)]
            if value > INT_MAX:
                raise FilebenchError(f"'{tok_text}' is out of range (filebench reads numbers up to 2^63 - 1)",
                                     path=path, line=line)
            out.append(Token("int", value, line, tok_text))
        elif kind == "negint":
            if int(tok_text) < -INT_MAX - 1:
                raise FilebenchError(f"'{tok_text}' is out of range", path=path, line=line)
            out.append(Token("int", int(tok_text), line, tok_text))
        else:
            out.append(Token("word", tok_text, line, tok_text))
        i = m.end()
    return out
