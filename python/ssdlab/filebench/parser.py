"""Statements of a filebench workload file, read into a :class:`Script` (no values resolved).

The grammar is filebench's (``parser_gram.y`` of filebench 1.5; the older 1.4 forms
``usage``, ``load``, ``define randvar`` and ``create fileset`` are read too)::

    set $var = 12k | true | word | "text" | cvar(...) | randvar(...)
    set mode quit timeout|alldone|firstdone        set mode nousestats
    define fileset name=..,path=..[,attr[=value]]...   define file name=..,path=..,...
    define process name=..[,instances=N] { thread name=..[,...] { flowop TYPE name=..,... ... } ... }
    create files      run [N | $var]      psrun [-N | N] [N]      eventgen rate=N
    echo "..."   usage "..."   system "..."   sleep N   enable lathist   version   debug N   quit

Variables are bound late, as in filebench: an attribute names ``$var`` and takes the value
the variable has when the run starts, so ``set`` after ``define`` still counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import FilebenchError, where
from .lexer import Token, tokenize


@dataclass
class Value:
    """A value as written: ``int``, ``bool``, ``str`` (a word or quoted text), ``var`` (a
    reference to a variable) or ``dist`` (``cvar(...)``/``randvar(...)``: a dict of its
    attributes)."""

    kind: str
    v: object
    line: int
    path: str = "<string>"


@dataclass
class Attr:
    name: str
    value: Value | None  # None: given bare (``prealloc``, ``random``): true
    line: int


@dataclass
class FlowopStmt:
    kind: str
    attrs: dict[str, Attr]
    line: int
    path: str = "<string>"


@dataclass
class ThreadStmt:
    attrs: dict[str, Attr]
    flowops: list[FlowopStmt]
    line: int
    path: str = "<string>"


@dataclass
class ProcessStmt:
    attrs: dict[str, Attr]
    threads: list[ThreadStmt]
    line: int
    path: str = "<string>"


@dataclass
class FilesetStmt:
    attrs: dict[str, Attr]
    line: int
    is_file: bool = False
    path: str = "<string>"


@dataclass
class Script:
    path: str
    filesets: list[FilesetStmt] = field(default_factory=list)
    processes: list[ProcessStmt] = field(default_factory=list)
    variables: dict[str, Value] = field(default_factory=dict)
    eventgen: Attr | None = None
    quit: str = "timeout"
    #: ``run``/``psrun``: its line and its duration as written (None: not given)
    run_line: int | None = None
    run_value: Value | None = None
    messages: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def warn(self, path: str, line: int | None, message: str) -> None:
        self.warnings.append(f"{where(path, line)}: {message}")


#: attribute names each entity accepts (filebench 1.5's grammar; ``filesizegamma`` and
#: ``cached`` from 1.4). Anything else is an error.
FILESET_ATTRS = {"name", "path", "entries", "size", "filesize", "prealloc", "paralloc", "reuse", "trusttree",
                 "readonly", "writeonly", "dirwidth", "dirdepthrv", "dirgamma", "leafdirs", "filesizegamma",
                 "sizegamma", "cached"}
FILE_ATTRS = {"name", "path", "size", "filesize", "prealloc", "paralloc", "reuse", "trusttree", "readonly",
              "writeonly", "cached"}
PROCESS_ATTRS = {"name", "instances", "nice"}
THREAD_ATTRS = {"name", "instances", "memsize", "useism", "ioprio"}
FLOWOP_ATTRS = {"workingset", "filename", "filesetname", "name", "random", "fd", "srcfd", "opennext", "dsync",
                "directio", "indexed", "target", "iters", "value", "blocking", "highwater", "iosize",
                "noreadahead"}
EVENTGEN_ATTRS = {"rate"}
CVAR_ATTRS = {"type", "parameters", "min", "max", "round"}
RANDVAR_ATTRS = {"name", "type", "seed", "gamma", "mean", "min", "round", "randsrc", "randtable"}

#: commands of filebench that ssdlab reads and does nothing with (they print, or steer
#: filebench's own console)
_QUIET = {"version", "vars", "help", "list"}


class _Parser:
    def __init__(self, text: str, path: str, loader=None, depth: int = 0) -> None:
        self.loaded = depth > 0
        self.path = path
        self.toks: list[Token] = tokenize(text, path)
        self.i = 0
        self.loader = loader
        self.depth = depth

    # ---- token helpers -------------------------------------------------------------------

    def err(self, message: str, line: int | None = None) -> FilebenchError:
        if line is None:
            line = self.peek().line if self.i < len(self.toks) else (self.toks[-1].line if self.toks else None)
        return FilebenchError(message, path=self.path, line=line)

    def peek(self, k: int = 0) -> Token:
        j = self.i + k
        if j < len(self.toks):
            return self.toks[j]
        last = self.toks[-1].line if self.toks else 1
        return Token("eof", None, last, "end of file")

    def next(self) -> Token:
        t = self.peek()
        if t.kind == "eof":
            raise self.err("unexpected end of file")
        self.i += 1
        return t

    def at_word(self, *words: str) -> bool:
        t = self.peek()
        return t.kind == "word" and t.value in words

    def expect(self, kind: str, what: str) -> Token:
        t = self.peek()
        if t.kind != kind:
            raise self.err(f"expected {what}, found {_shown(t)}", t.line)
        return self.next()

    def expect_word(self, *words: str) -> Token:
        t = self.peek()
        if t.kind != "word" or t.value not in words:
            want = " or ".join(f"'{w}'" for w in words)
            raise self.err(f"expected {want}, found {_shown(t)}", t.line)
        return self.next()

    # ---- values and attributes -----------------------------------------------------------

    def value(self, allowed_dist: bool = False) -> Value:
        before = self.peek(-1) if self.i else None
        t = self.next()
        if (before is not None and before.kind == "=" and t.kind == "word" and t.line > before.line
                and (t.value in _COMMANDS or self.peek().kind == "=")):
            # ``set $n=`` or ``entries=`` with nothing after it: the next line's command or
            # attribute is not its value (it was taken as one, and the error fell further on).
            name = self.peek(-3) if self.i >= 3 else None
            said = "" if name is None else f"{'$' if name.kind == 'var' else ''}{name.value}: "
            raise self.err(f"{said}expected a value after '=', found the end of the line", before.line)
        if t.kind == "int":
            return Value("int", t.value, t.line, self.path)
        if t.kind == "var":
            return Value("var", t.value, t.line, self.path)
        if t.kind == "quoted":
            return Value("str", t.value, t.line, self.path)
        if t.kind == "word":
            if t.value in ("true", "false"):
                return Value("bool", t.value == "true", t.line, self.path)
            if t.value in ("cvar", "randvar") and self.peek().kind == "(":
                if not allowed_dist:
                    raise self.err(f"{t.value}(...) is only read in 'set $var = {t.value}(...)'", t.line)
                self.next()
                names = CVAR_ATTRS if t.value == "cvar" else RANDVAR_ATTRS
                attrs = self.attrs(names, f"{t.value}(...)", closing=")")
                self.expect(")", "')'")
                return Value("dist", {"form": t.value, "attrs": attrs}, t.line, self.path)
            return Value("str", t.value, t.line, self.path)
        raise self.err(f"expected a value, found {_shown(t)}", t.line)

    def attrs(self, names: set[str], what: str, closing: str | None = None) -> dict[str, Attr]:
        """``name[=value] {, name[=value]}``; an unknown name is an error at its line. A name
        given twice keeps the last value (filebench's get_attr takes the last)."""
        out: dict[str, Attr] = {}
        while True:
            t = self.peek()
            if t.kind != "word":
                if closing and t.kind == closing and not out:
                    return out
                raise self.err(f"expected an attribute of {what}, found {_shown(t)}", t.line)
            self.next()
            if t.value not in names:
                raise self.err(f"unknown attribute '{t.value}' of {what}", t.line)
            val = None
            if self.peek().kind == "=":
                self.next()
                val = self.value()
            out[t.value] = Attr(t.value, val, t.line)
            if self.peek().kind != ",":
                return out
            self.next()

    # ---- statements ----------------------------------------------------------------------

    def script(self, script: Script) -> Script:
        after_run = False
        while self.peek().kind != "eof":
            t = self.peek()
            if t.kind != "word":
                raise self.err(f"expected a command, found {_shown(t)}", t.line)
            if after_run:
                script.warn(self.path, t.line, f"'{t.value}' after the run: filebench ends with its run and never reads "
                                    "it; ignored")
                self._skip_statement()
                continue
            done = self.statement(script)
            if done and not self.loaded:
                after_run = True
        return script

    def _skip_statement(self) -> None:
        """Passes over one statement after the run, checking only that it is made of tokens;
        braces are balanced."""
        depth = 0
        self.next()
        while self.peek().kind != "eof":
            t = self.peek()
            if depth == 0 and t.kind == "word" and t.value in _COMMANDS and self.peek(-1).kind not in ("=", ","):
                return
            self.next()
            if t.kind == "{":
                depth += 1
            elif t.kind == "}":
                depth = max(0, depth - 1)

    def statement(self, s: Script) -> bool:
        """One statement; True for the run (``run``/``psrun``)."""
        t = self.next()
        cmd, line = t.value, t.line
        if cmd == "set":
            self.set_command(s, line)
        elif cmd == "define":
            self.define(s, line)
        elif cmd == "create":
            what = self.expect_word("files", "file", "fileset", "filesets", "processes", "process")
            if what.value in ("processes", "process"):
                s.warn(self.path, line, "'create processes': the threads start with the run; ignored")
        elif cmd in ("run", "psrun"):
            s.run_line = line
            if cmd == "run":
                if self.peek().kind in ("int", "var"):
                    s.run_value = self.value()
            else:
                nums = []
                while self.peek().kind == "int" and len(nums) < 2:
                    nums.append(self.next())
                if len(nums) == 2:
                    s.run_value = Value("int", nums[1].value, nums[1].line, self.path)
                s.warn(self.path, line, "psrun: filebench prints its summary every period as well; only the summary "
                             "at the end is given")
            return True
        elif cmd == "eventgen":
            if self.peek().kind == "word" and self.peek().value == "rate":
                a = self.attrs(EVENTGEN_ATTRS, "eventgen")
                s.eventgen = a["rate"]
        elif cmd in ("echo", "usage", "log"):
            s.messages.append(self.text_list())
        elif cmd == "system":
            text = self.text_list()
            s.warn(self.path, line, f"system \"{text}\": commands are not run in a simulation; ignored")
        elif cmd == "sleep":
            v = self.next()
            if v.kind not in ("int", "var"):
                raise self.err(f"sleep takes a number of seconds, found {_shown(v)}", v.line)
            s.warn(self.path, line, "sleep before the run: nothing happens during it in a simulation; ignored")
        elif cmd == "enable":
            what = self.expect_word("lathist", "multi")
            if what.value == "lathist":
                s.warn(self.path, line, "enable lathist: the latency histogram is not printed; ignored")
            else:
                raise self.err("enable multi: multi-client synchronisation is not modelled", line)
        elif cmd == "domultisync":
            raise self.err("domultisync: multi-client synchronisation is not modelled", line)
        elif cmd == "debug":
            self.expect("int", "a debug level")
        elif cmd in ("quit", "exit", "shutdown"):
            if cmd == "shutdown":  # 1.4: "shutdown processes"
                if self.at_word("processes", "process"):
                    self.next()
            return True
        elif cmd == "load":
            name = self.expect("word", "a personality's name")
            self.load(s, name)
        elif cmd == "stats":
            self.expect_word("clear", "snap", "dump", "xmldump", "multidump")
            if self.peek().kind == "quoted":
                self.next()
            s.warn(self.path, line, "stats: the summary is printed once, at the end of the run; ignored")
        elif cmd in _QUIET:
            while self.peek().kind == "word" and self.peek().value not in _COMMANDS:
                self.next()
        elif cmd in ("foreach", "warmup", "fscheck", "fsflush", "nousestats", "enable_osprof",
                     "disable_osprof"):
            raise self.err(f"'{cmd}' is not read by ssdlab", line)
        else:
            raise self.err(f"unknown command '{cmd}'", line)
        return False

    def text_list(self) -> str:
        parts = []
        while self.peek().kind in ("quoted", "var"):
            t = self.next()
            parts.append(t.value if t.kind == "quoted" else "$" + t.value)
        if not parts:
            raise self.err(f"expected quoted text, found {_shown(self.peek())}")
        return "".join(parts)

    def set_command(self, s: Script, line: int) -> None:
        t = self.next()
        if t.kind == "word" and t.value == "mode":
            w = self.next()
            if w.kind == "word" and w.value == "quit":
                how = self.expect_word("timeout", "alldone", "firstdone")
                s.quit = how.value
                return
            if w.kind == "word" and w.value == "nousestats":
                return
            raise self.err(f"set mode: expected 'quit' or 'nousestats', found {_shown(w)}", w.line)
        if t.kind != "var":
            raise self.err(f"set: expected $variable or 'mode', found {_shown(t)}", t.line)
        self.expect("=", "'='")
        s.variables[t.value] = self.value(allowed_dist=True)

    def define(self, s: Script, line: int) -> None:
        t = self.next()
        what = t.value if t.kind == "word" else None
        if what in ("fileset", "filesets"):
            s.filesets.append(FilesetStmt(self.attrs(FILESET_ATTRS, "a fileset"), line, path=self.path))
        elif what in ("file", "files"):
            s.filesets.append(FilesetStmt(self.attrs(FILE_ATTRS, "a file"), line, is_file=True, path=self.path))
        elif what in ("process", "processes", "proc"):
            s.processes.append(self.process(line))
        elif what == "randvar":  # 1.4: define randvar name=$x, type=gamma, ...
            attrs = self.attrs(RANDVAR_ATTRS, "a random variable")
            name = attrs.get("name")
            if name is None or name.value is None or name.value.kind != "var":
                raise self.err("define randvar: needs name=$variable", line)
            s.variables[name.value.v] = Value("dist", {"form": "randvar", "attrs": attrs}, line, self.path)
        elif what == "flowop":
            raise self.err("define flowop: composite flowops are not read by ssdlab", line)
        elif what in ("thread",):
            raise self.err("define thread: threads are defined inside 'define process ... { }'", line)
        elif what == "posset":
            raise self.err("define posset: position sets are not modelled", line)
        else:
            raise self.err(f"define: expected fileset, file or process, found {_shown(t)}", t.line)

    def process(self, line: int) -> ProcessStmt:
        attrs = self.attrs(PROCESS_ATTRS, "a process")
        self.expect("{", "'{' opening the process's threads")
        threads = []
        while not self.peek().kind == "}":
            t = self.peek()
            if not (t.kind == "word" and t.value == "thread"):
                raise self.err(f"expected 'thread' or '}}', found {_shown(t)}", t.line)
            self.next()
            tattrs = self.attrs(THREAD_ATTRS, "a thread")
            self.expect("{", "'{' opening the thread's flowops")
            flowops = []
            while not self.peek().kind == "}":
                f = self.peek()
                if not (f.kind == "word" and f.value == "flowop"):
                    raise self.err(f"expected 'flowop' or '}}', found {_shown(f)}", f.line)
                self.next()
                kind = self.expect("word", "a flowop type")
                fattrs = self.attrs(FLOWOP_ATTRS, f"flowop {kind.value}") if self.peek().kind == "word" \
                    and self.peek().value in FLOWOP_ATTRS else {}
                flowops.append(FlowopStmt(kind.value, fattrs, f.line, self.path))
            self.next()
            if not flowops:
                raise self.err("a thread needs at least one flowop", t.line)
            threads.append(ThreadStmt(tattrs, flowops, t.line, self.path))
        self.next()
        if not threads:
            raise self.err("a process needs at least one thread", line)
        return ProcessStmt(attrs, threads, line, self.path)

    def load(self, s: Script, name: Token) -> None:
        """1.4's ``load NAME``: reads a personality shipped with ssdlab, as if written here."""
        if self.loader is None or self.depth > 4:
            raise self.err(f"load {name.value}: personalities cannot be loaded here", name.line)
        text, path = self.loader(name.value, self.path, name.line)
        _Parser(text, path, self.loader, self.depth + 1).script_into(s)

    def script_into(self, s: Script) -> None:
        """A loaded personality's statements; its ``run`` (if any) stands until the loading
        file says ``run`` itself."""
        self.script(s)


#: words that begin a statement (for passing over statements after the run)
_COMMANDS = {"set", "define", "create", "run", "psrun", "eventgen", "echo", "usage", "log", "system", "sleep",
             "enable", "domultisync", "debug", "quit", "exit", "shutdown", "load", "stats", "version", "vars",
             "help", "list", "foreach", "warmup"}


def _shown(t: Token) -> str:
    if t.kind == "eof":
        return "the end of the file"
    text = t.text if len(t.text) <= 40 else t.text[:37] + "..."
    return f"'{text}'"


def parse(text: str, path: str = "<string>", loader=None) -> Script:
    """The statements of a workload file (``loader(name, path, line) -> (text, path)`` reads
    what ``load NAME`` names)."""
    script = Script(path)
    _Parser(text, path, loader).script(script)
    return script
