"""Safe text for the reports: every user-supplied string (group and algorithm labels,
file names, parameters, measure names and citations) goes through here before it
enters Markdown, HTML or a figure, so that a label such as ``<script>...</script>``,
``[x](javascript:...)`` or ``vendor-$\\frac$`` is shown as written and never runs,
links or is read as mathtext.
"""

from __future__ import annotations

import html
import re
import unicodedata

#: Markdown punctuation that can start emphasis, links, code, headings, lists or tables.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:])")


def escape_html(text: object) -> str:
    """``text`` as HTML text or attribute content: ``& < > " '`` replaced by entities.

    >>> escape_html("<b>x</b> & 'y'")
    '&lt;b&gt;x&lt;/b&gt; &amp; &#x27;y&#x27;'
    """
    return html.escape(str(text), quote=True)


def escape_markdown(text: object) -> str:
    """``text`` as literal Markdown: no tag, link, emphasis or code can form from it.

    Markdown punctuation is backslash-escaped, HTML specials become entities and
    line breaks become spaces (a label never starts a new block).

    >>> escape_markdown("<script>alert(1)</script>")
    '&lt;script&gt;alert\\\\(1\\\\)&lt;/script&gt;'
    >>> escape_markdown("[x](javascript:y) *b*")
    '\\\\[x\\\\]\\\\(javascript\\\\:y\\\\) \\\\*b\\\\*'
    """
    flat = " ".join(str(text).splitlines())
    return escape_html(_MARKDOWN_SPECIAL.sub(r"\\\1", flat))


def markdown_code(text: object) -> str:
    """``text`` in a monospace span, escaped (a backtick in ``text`` cannot end it).

    >>> markdown_code("a`b<i>")
    '<code>a\\\\`b&lt;i&gt;</code>'
    """
    return f"<code>{escape_markdown(text)}</code>"


def markdown_list(items, *, code: bool = False, sep: str = ", ") -> str:
    """The escaped ``items`` joined by ``sep``, each as code when ``code``.

    >>> markdown_list(["F", "<M>"])
    'F, &lt;M&gt;'
    """
    one = markdown_code if code else escape_markdown
    return sep.join(one(item) for item in items)


def escape_mathtext(text: object) -> str:
    r"""``text`` for a matplotlib text that reads mathtext: drawn as written.

    matplotlib reads a string holding an even number of unescaped ``$`` as
    mathtext (and refuses one it cannot parse, such as ``$\frac$``); a ``$``
    escaped as ``\$`` is drawn as a plain ``$``.  Every ``$`` is escaped, so no
    part of ``text`` is mathtext and matplotlib draws it exactly as given:
    backslashes, ``_``, ``^``, ``%`` and braces mean something only inside
    mathtext.  Every user string entering a figure goes through here, where it is
    placed; the figure's own texts (log-axis tick labels such as
    ``$\mathdefault{10^{-2}}$``) stay mathtext.

    A control character (an escape, a bidirectional override; a line break aside) is
    drawn as its escape, as :func:`escape_controls` writes it: a font has no glyph for
    it, and an SVG holding one is no longer XML.

    >>> print(escape_mathtext(r"vendor-$\frac$"))
    vendor-\$\frac\$
    >>> escape_mathtext(50)
    '50'
    >>> print(escape_mathtext("evil\x1b[2J\u202etwo\nlines"))
    evil\x1b[2J\u202etwo
    lines
    """
    lines = str(text).split("\n")  # a line break a caller placed (a wrapped title) kept
    return "\n".join(escape_controls(line) for line in lines).replace("$", r"\$")


#: Unicode categories a terminal would act on rather than show: controls (escape
#: sequences, carriage returns), format characters (bidirectional overrides,
#: zero-width characters), surrogates, private use, unassigned, line and paragraph separators.
_UNSHOWN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


#: The bidirectional controls: they reorder the text that follows them.
_BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character that acts where it is shown rather than showing
    itself: a control (C0, C1 and DEL: line breaks, escapes), a line or paragraph
    separator, a lone surrogate, a bidirectional control.  What writing needs stays out
    of it: joiners (ZWJ, ZWNJ), the soft hyphen, characters newer than this Python's
    Unicode tables.

    >>> has_control("vendor-x"), has_control("a\\nb"), has_control("a\\x85b")
    (False, True, True)
    >>> has_control("a\\u202eb"), has_control("نتایج\\u200cها")
    (True, False)
    """
    return any(
        unicodedata.category(ch) in ("Cc", "Cs", "Zl", "Zp") or ch in _BIDI_CONTROLS for ch in text
    )


def escape_controls(text: object) -> str:
    """``text`` with each character :func:`has_control` finds written as its escape
    (``\\x1b``, ``\\u202e``): shown, not acting, where a name is shown as a line of
    text (a figure's caption, its files' titles, which XML refuses controls in); what
    writing needs (joiners) kept.

    >>> escape_controls("vendor\\u202eevil\\x1b"), escape_controls("نتایج\\u200cها")
    ('vendor\\\\u202eevil\\\\x1b', 'نتایج\\u200cها')
    """
    return "".join(_escaped(ch) if has_control(ch) else ch for ch in str(text))


def escape_terminal(text: object, *, newlines: bool = True) -> str:
    """``text`` safe to print on a terminal: every control, format (bidirectional,
    zero-width) or separator character written as its escape, ``\\x1b`` or
    ``\\u202e``; line breaks kept when ``newlines`` (a message's own lines).

    >>> escape_terminal("a\\x1b[2Jb\\u202ec")
    'a\\\\x1b[2Jb\\\\u202ec'
    >>> escape_terminal("two\\nlines"), escape_terminal("x\\ny", newlines=False)
    ('two\\nlines', 'x\\\\ny')
    """
    out = []
    for ch in str(text):
        if ch == "\n" and newlines:
            out.append(ch)
        elif unicodedata.category(ch) in _UNSHOWN or (ch == "\t" and not newlines):
            out.append(_escaped(ch))
        else:
            out.append(ch)
    return "".join(out)


def one_line(text: object) -> str:
    """``text`` as a value a message names on one of its lines: a line break (or any
    other character :func:`escape_terminal` escapes) written as its escape.

    >>> print(one_line("reports/new\\nline"))
    reports/new\\nline
    """
    return escape_terminal(text, newlines=False)


#: What :func:`has_control` finds in a page but the white space HTML reads (tab, line
#: feed, carriage return): C0 and C1 controls, DEL, surrogates, the line and paragraph
#: separators and the bidirectional controls.
_PAGE_CONTROLS = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\u2028\u2029"
    + "".join(sorted(_BIDI_CONTROLS))
    + "]"
)


def show_controls(page: str) -> str:
    """An HTML ``page`` with each character that would act rather than show (an escape,
    a bidirectional override from a label: ``vendor\\u202eevil`` reversed the rest of
    its sentence) written as its escape, as the terminal shows it; the page's own white
    space kept.  Every page audit writes goes through it (the front page, each
    notebook's).

    >>> show_controls("<td>red\\x1b[31m</td>\\n<li>bidi\\u202eevil</li>")
    '<td>red\\\\x1b[31m</td>\\n<li>bidi\\\\u202eevil</li>'
    """
    return _PAGE_CONTROLS.sub(lambda match: _escaped(match.group()), page)


def _escaped(ch: str) -> str:
    """A character as Python writes its escape: ``\\x1b``, ``\\u202e``, ``\\U000e0001``."""
    code = ord(ch)
    return (
        repr(ch)[1:-1] if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    )


__all__ = [
    "escape_controls",
    "escape_html",
    "escape_markdown",
    "escape_mathtext",
    "escape_terminal",
    "markdown_code",
    "markdown_list",
    "one_line",
]
