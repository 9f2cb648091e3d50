"""Reading `strace -f -y -qq -o FILE` output into a list of calls, for the
durability-order checker (durability.py) and the campaign's counts of the
calls each command makes (torture.py).

Each finished call becomes a Call(index, pid, name, args, ret, err): args
are the call's arguments, each either FdArg(fd, path) (a descriptor that
`-y` annotated with its path), a str (a quoted string, unescaped), or the
raw text; ret is the integer result (None for `?`), err the errno name of a
failed call. Calls a thread left <unfinished ...> are joined with their
<... resumed> half and take the place of the resumed line: a call is
ordered where it finished, which is what "A happened before B" needs.
"""

import collections
import re

Call = collections.namedtuple("Call", "index pid name args ret err")
FdArg = collections.namedtuple("FdArg", "fd path")

_LINE = re.compile(r"^(\d+)\s+(.*)$")
_RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")
_START = re.compile(r"^(\w+)\((.*)$")
# The end of a call: ") = RET[<path>][ ERRNO (text)]" (the result of an
# openat is a descriptor, annotated too).
_END = re.compile(r"\)\s+=\s+(-?\d+|\?|0x[0-9a-f]+)(?:<.*?>)?(?:\s+(E[A-Z0-9]+)\b.*|\s+\(.*\))?$")
_FD = re.compile(r"^(-?\d+)<(.*)>$", re.S)

_ESC = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", "\\": "\\",
        '"': '"', "'": "'", "a": "\a", "b": "\b"}


def unescape(s):
    """strace's C escapes (\\n, \\", \\ooo, \\xhh) back to text."""
    out, i = bytearray(), 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 == len(s):
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        n = s[i + 1]
        if n in _ESC:
            out += _ESC[n].encode()
            i += 2
        elif n == "x":
            out.append(int(s[i + 2:i + 4], 16))
            i += 4
        elif n.isdigit():
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1:j], 8) & 0xFF)
            i = j
        else:
            out += n.encode()
            i += 2
    return out.decode("utf-8", "surrogateescape")


def split_args(text):
    """Top-level comma-separated arguments, respecting quotes, brackets and
    the <path> that -y adds after a descriptor."""
    args, cur, depth, i = [], [], 0, 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c == "<" and cur and "".join(cur).strip().lstrip("-").isdigit():
            # fd<path>: the path ends at the '>' that closes it (paths with
            # '>' in them are not made by the tests).
            j = text.find(">", i)
            j = len(text) - 1 if j < 0 else j
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c == "," and depth == 0:
            args.append("".join(cur).strip())
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    if cur and "".join(cur).strip():
        args.append("".join(cur).strip())
    return args


def _arg(a):
    m = _FD.match(a)
    if m:
        return FdArg(int(m.group(1)), unescape(m.group(2)))
    if a.startswith('"'):
        body = a[1:]
        if body.endswith("..."):
            body = body[:-3]
        if body.endswith('"'):
            body = body[:-1]
        return unescape(body)
    return a


def _finish(index, pid, name, rest):
    m = _END.search(rest)
    if not m:
        return None
    args = [_arg(a) for a in split_args(rest[:m.start()])]
    r = m.group(1)
    ret = None if r == "?" else int(r, 0)
    return Call(index, pid, name, args, ret, m.group(2))


def parse(text):
    """The calls of a trace, in the order they finished."""
    calls, pending = [], {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        pid, body = int(m.group(1)), m.group(2)
        if body.startswith(("+++", "---")):
            continue
        r = _RESUMED.match(body)
        if r:
            start = pending.pop(pid, None)
            if start is None or start[0] != r.group(1):
                continue
            name, rest = start[0], start[1] + r.group(2)
        else:
            s = _START.match(body)
            if not s:
                continue
            name, rest = s.group(1), s.group(2)
            if rest.endswith("<unfinished ...>"):
                pending[pid] = (name, rest[:-len("<unfinished ...>")].rstrip())
                continue
        c = _finish(len(calls), pid, name, rest)
        if c is not None:
            calls.append(c)
    return calls


def parse_file(path):
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        return parse(f.read())
