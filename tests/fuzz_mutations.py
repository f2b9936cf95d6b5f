"""Mutations for the fuzzer (tests/fuzzing.py): what a hostile or unlucky tree does to a file's bytes,
lines and YAML structure (types where names belong, aliases, tags, huge numbers, template syntax,
names holding workflow commands, terminal controls, bidi overrides and markup). Each is a function of the
text and a seeded random generator."""

from __future__ import annotations

import random

HOSTILE_SCALARS = [
    "[a, b]", "{a: b}", "{a: {b: [c]}}", "[]", "{}", "null", "~", "true", "0", "-1", "1e999", "-1e999", ".nan",
    "9" * 4301, "0x" + "f" * 64, "!!int abc", "!!float x", "!!bool maybe", "!!set {a, b}", "!!omap [a: 1]",
    "!!binary '***'", "!!timestamp 2001-13-45", "2001-13-45", "!Ref x", "!!str", "'{{ .Values.x }}'",
    "{{ .Values.x }}", "${VAR}", "\"a\\n::error::spoofed\"", "\"##[error]legacy\"", "\"\\u2028::warning::x\"",
    "\"\\e[2J\"", "\"\\0\"", "'x' # kubehop: ignore[*]", "*undefined", "&a x", "\"" + "x" * 5000 + "\"",
    "v1", "extensions/v1beta1", "v1beta1", "1.2.3", ">=1.0.0 <2.0.0", "'*'", "oci://localhost/x", "http://127.0.0.1:9/x",
    # what a terminal, a log or a renderer acts on (tests/hostile_text.py): OSC 8, C1, bidi, separators, markup
    "\"\\e]8;;http://x\\ax\\e]8;;\\a\"", "\"\\x9b31m\\N\"", "\"\\u202e\\u2066x\"", "\"\\L\\P\"", "\"a\\r::error::x\"",
    "'<img src=x onerror=alert(1)>'", "'[x](javascript:alert(1))'", "'@mention #1'",
]
REMOVED_APIS = ["extensions/v1beta1", "policy/v1beta1", "batch/v1beta1", "autoscaling/v2beta2",
                "flowcontrol.apiserver.k8s.io/v1beta3", "networking.k8s.io/v1beta1", "apiextensions.k8s.io/v1beta1",
                "helm.toolkit.fluxcd.io/v2beta1", "source.toolkit.fluxcd.io/v1beta2", "cert-manager.io/v1alpha2"]
BYTES = [b"\xff", b"\xfe\xff", b"\x00", b"\r", b"\r\n", b"\t", b"\x1b[31m", "\u2028".encode(), b"\xef\xbb\xbf",
         b"---\n", b"...\n", b"%YAML 1.1\n", b"%TAG ! tag:x,2000:\n", b"{{", b"}}", b"<<: *a\n", b"? ", b"|-\n", b"&a ", b"*a",
         b"\x1b]8;;http://x\x07", "\u202e\u0085\u009b".encode(), b"##[error]x", b"\n::error::x\n"]
# File names a pull request may write (a case renames one of its files to one of them).
FILE_NAMES = ["a\n::error::x", "##[error]x", "\u202eevil", "\x1b]8;;x\x07y\x1b[2J", "\u2028\u0085\u009b",
              b"latin\xff".decode("utf-8", "surrogateescape"), "[x](javascript:alert(1)) @mention <img src=x>"]


def mutate(text: bytes, rng: random.Random) -> bytes:
    """One to four mutations of a file's bytes."""
    for _ in range(rng.randint(1, 4)):
        text = rng.choice(_MUTATIONS)(text, rng)
    return text


def _lines(text: bytes) -> list[bytes]:
    return text.split(b"\n")


def _scalar_swap(text: bytes, rng: random.Random) -> bytes:
    """A value after `key:` replaced by something of another type."""
    lines = _lines(text)
    candidates = [i for i, line in enumerate(lines) if b": " in line]
    if not candidates:
        return text
    i = rng.choice(candidates)
    key = lines[i].split(b": ", 1)[0]
    lines[i] = key + b": " + rng.choice(HOSTILE_SCALARS).encode()
    return b"\n".join(lines)


# How a removed API may be written (what fix must migrate or say it cannot, as scan reports it).
API_SHAPES = ["{}", "!!str {}", "'{}'", "!!str \"{}\"", "!<tag:yaml.org,2002:str> {}", "!custom {}", "|-\n  {}"]


def _api_swap(text: bytes, rng: random.Random) -> bytes:
    lines = _lines(text)
    for i, line in enumerate(lines):
        if line.lstrip().startswith(b"apiVersion:") and rng.random() < 0.5:
            api = rng.choice(API_SHAPES).format(rng.choice(REMOVED_APIS)) if rng.random() < 0.3 \
                else rng.choice(REMOVED_APIS)
            lines[i] = line.split(b"apiVersion:")[0] + b"apiVersion: " + api.encode()
    return b"\n".join(lines)


def _line_edit(text: bytes, rng: random.Random) -> bytes:
    lines = _lines(text)
    if not lines:
        return text
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.randrange(5)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(i, lines[j])
    elif op == 2:
        lines[i], lines[j] = lines[j], lines[i]
    elif op == 3:
        lines[i] = b" " * rng.randint(1, 5) + lines[i]
    else:
        lines[i] = lines[i].lstrip()
    return b"\n".join(lines)


def _bytes(text: bytes, rng: random.Random) -> bytes:
    at = rng.randint(0, len(text))
    return text[:at] + rng.choice(BYTES) + text[at:]


def _truncate(text: bytes, rng: random.Random) -> bytes:
    return text[:rng.randint(0, len(text))]


def _anchor_bomb(text: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(4)
    if kind == 0:
        extra = b"x: &a {b: *a}\n"  # recursive alias
    elif kind == 1:
        levels = [b"l0: &l0 [" + b", ".join([b"x"] * 9) + b"]"]
        levels += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 9)}]".encode() for n in range(1, rng.randint(2, 8))]
        extra = b"\n".join(levels) + b"\n"
    elif kind == 2:
        extra = b"big: &big " + b"x" * rng.choice([10, 1000, 100_000]) + b"\n" + b"".join(
            f"k{n}: *big\n".encode() for n in range(rng.randint(1, 300)))
    else:
        depth = rng.choice([10, 300, 3000])
        extra = b"deep: " + b"[" * depth + b"]" * depth + b"\n"
    if rng.random() < 0.5 and b"\nspec:" in text:
        return text.replace(b"\nspec:", b"\nspec:\n  " + extra.replace(b"\n", b"\n  ").rstrip() + b"\nspec-was:", 1)
    return text + b"\n" + extra


def _structural(text: bytes, rng: random.Random) -> bytes:
    """Parse, replace a random node's value by another type or delete it, dump again."""
    import yaml

    if b"&" in text or b"*" in text or len(text) > 200_000:  # the harness is no alias bomb's victim
        return _scalar_swap(text, rng)
    try:
        documents = list(yaml.safe_load_all(text.decode("utf-8")))
    except Exception:  # noqa: BLE001 - not YAML: another mutation
        return _bytes(text, rng)
    nodes = [(d, k) for doc in documents for d, k in _containers(doc)]
    if not nodes:
        return text
    holder, key = rng.choice(nodes)
    replacement = rng.choice([[], {}, None, 0, 1e300, "x", ["a", {"b": "c"}], {"a": ["b"]}, True,
                              "a\n::error::spoofed", 10 ** 50])
    if rng.random() < 0.3:
        del holder[key]
    else:
        holder[key] = replacement
    try:
        return yaml.safe_dump_all(documents, allow_unicode=True).encode()
    except Exception:  # noqa: BLE001
        return text


def _containers(doc, depth: int = 0):
    if depth > 12:
        return
    if isinstance(doc, dict):
        for key, value in list(doc.items()):
            yield doc, key
            yield from _containers(value, depth + 1)
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            yield doc, index
            yield from _containers(value, depth + 1)


_MUTATIONS = [_scalar_swap, _scalar_swap, _api_swap, _line_edit, _line_edit, _bytes, _truncate, _anchor_bomb,
              _structural, _structural]
