"""The one exception the fio parser raises, with a location a user can jump to."""

from __future__ import annotations

from ..printable import escape_controls


class FioJobError(ValueError):
    """A job file that fio would reject, or that ssdlab cannot simulate.

    ``str(e)`` is a single line ``path:line: option 'bs': message`` (the parts that are
    unknown are left out), so a CLI can print it as is. ``option`` is the option as written
    (an unknown option is named in the message itself).
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        option: str | None = None,
        name_option: bool = True,
    ) -> None:
        self.message = escape_controls(" ".join(str(message).split()))
        self.path = path
        self.line = line
        self.option = None if option is None else escape_controls(option)
        self._name_option = name_option and option is not None
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.path or "<string>"
        if self.line is not None:
            where = f"{where}:{self.line}"
        if self._name_option:
            return f"{where}: option '{self.option}': {self.message}"
        return f"{where}: {self.message}"

    def __str__(self) -> str:
        return self._render()
