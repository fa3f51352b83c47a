"""The HTML pages (``ssdlab report``'s run report, ``ssdlab reproduce``'s gallery) are jinja2
templates shipped in ``ssdlab/templates``; this module loads them, autoescaped, and holds the
few formatting filters they share."""

from __future__ import annotations

import base64
import functools
import io
from typing import Any


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 22nd, 101st, 111th."""
    n = int(n)
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


@functools.cache  # one per process: jinja2 then compiles each template once
def environment():
    """The jinja2 environment: the package's templates, autoescape on for every template (a
    job name or an error message is text, never markup), undefined names an error."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("ssdlab", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters["ordinal"] = ordinal
    return env


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)


def png_uri(png: bytes) -> str:
    """PNG bytes as a data: URI, so that a page stands alone."""
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def figure_uri(fig: Any, layout: bool = True) -> str:
    """A matplotlib figure, laid out (``layout=False``: its margins are set) and closed, as a
    PNG data: URI."""
    from .plotting import finish, pyplot

    buf = io.BytesIO()
    finish(fig, layout)
    fig.savefig(buf, format="png", dpi=PAGE_DPI)
    pyplot().close(fig)
    return png_uri(buf.getvalue())


#: Figures on a page are drawn at PAGE_WIDTH_IN inches and PAGE_DPI dots per inch: 1,300
#: pixels, the width of the page's column, so that they are shown at their own size.
PAGE_WIDTH_IN = 13.0
PAGE_DPI = 100
