"""The one exception the filebench reader raises, and the warnings it collects."""

from __future__ import annotations


class FilebenchError(ValueError):
    """A workload file that filebench would reject, or whose meaning ssdlab cannot simulate.

    ``str(e)`` is one line, ``FILE:LINE: message`` (``FILE`` alone when no line applies), so
    a command line prints it as ``ssdlab: error: FILE:LINE: message``.
    """

    def __init__(self, message: str, *, path: str = "<string>", line: int | None = None) -> None:
        self.message = " ".join(str(message).split())
        self.path = path
        self.line = line
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"

    def __str__(self) -> str:
        return self._render()


def where(path: str, line: int | None) -> str:
    return path if line is None else f"{path}:{line}"
