"""The secret rules: one table, shared by redaction (`mcptape.redaction.redact`) and `mcptape check`.

Pure, and linear in its input: every regular expression here has bounded repeats or a single
greedy run, and each rule has a cheap literal hint (a C-speed `in` test) that spares the
expression on strings that cannot match. Three kinds of rule:

- **shapes** (`SHAPES`): token formats found anywhere in any string (`ghp_...`, `sk_live_...`,
  PEM private keys, `user:password@` in URLs, `Basic ...`, `AccountKey=...`);
- **names** (`name_strength`): the value of a member, header, query parameter or `name=value`
  in text is a secret when its name is one. Whole names from `SECRET_NAMES`, or names whose last
  word(s) are in `SECRET_ENDINGS`, never a bare suffix: `pageToken`, `nextPageToken`, `cursor`,
  `nextCursor` and other pagination or protocol names (`EXEMPT_NAMES`, `EXEMPT_WORDS`) are not;
  short words (`pass`, `auth`, `key`, `sig`...: `WEAK_NAMES`, `WEAK_ENDINGS`) only when the value
  looks like a credential (`random_looking`), so `"pass": "yes"` and `"auth": "oauth"` stay;
- **base64**: a base64 run that decodes to text holding a secret of the two kinds above.

`Scanner.spans(text)` gives the secret parts of a string (start, end, rule name); redaction
replaces them, `check` reports them. docs/cassette-format.md#redaction is the table in prose.
"""

from __future__ import annotations

from .rules import (
    EXEMPT_NAMES,
    EXEMPT_WORDS,
    MARKER,
    NAME_WORDS,
    PEM_BEGIN,
    PEM_END,
    PEM_HINT,
    PEM_NAME,
    SECRET_ENDINGS,
    SECRET_NAMES,
    SHAPES,
    WEAK_ENDINGS,
    WEAK_NAMES,
    Shape,
    Strength,
    credential_like,
    name_strength,
    normalize,
    random_looking,
)
from .scan import (
    B64_MAX,
    B64_MIN,
    LONG,
    PemLines,
    Scanner,
    Span,
    _b64_matches,
    _b64_spans,
    _merge,
    pem_spans,
    replace_spans,
)

__all__ = [
    "B64_MAX", "B64_MIN", "EXEMPT_NAMES", "EXEMPT_WORDS", "LONG", "MARKER", "NAME_WORDS", "PEM_BEGIN",
    "PEM_END", "PEM_HINT", "PEM_NAME", "SECRET_ENDINGS", "SECRET_NAMES", "SHAPES", "WEAK_ENDINGS",
    "WEAK_NAMES", "PemLines", "Scanner", "Shape", "Span", "Strength", "_b64_matches", "_b64_spans",
    "_merge", "credential_like", "name_strength", "normalize", "pem_spans", "random_looking",
    "replace_spans",
]  # fmt: skip
