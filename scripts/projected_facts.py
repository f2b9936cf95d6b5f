"""Which facts kubehop holds as `status: projected` for a Kubernetes minor, and which a changelog names.

    python scripts/projected_facts.py --minor 1.38 [--changelog CHANGELOG-1.38.md]

It only helps a person: it never edits the data (confirming a fact stays a human edit, rules/README.md).

A fact concerns a minor through `removed_in`, `locked_in` (not in a gate with a `removal_source`: only its
removal is projected) or `minor` (a hop note), in any data file of rules/, read through scanner/data.py.

--changelog PATH (CHANGELOG-1.NN.md or the release team's notes draft) looks for each fact, as whole
case-sensitive words, in the changelog's entries (a list item with its continuation lines): an API rule's
apiVersion and kind (or plural) in one entry, with a removal word ("remov", "no longer", "drop",
"unavailable", "stop serving"); a gate's name with a removal word, or "lock"; each flag or plugin name and
a configuration version's apiVersion, with a removal word; every identifier of a hop note (CamelCase,
camelCase, snake_case, --flags, /paths), anywhere: a note without any is never confirmed. Facts it does
not name come first, with the lines that mention them. Exit code 0 when every fact is named, 1 otherwise,
2 on bad input.

Then, as leads to read that do not change the exit code: entries with "remov", "no longer served" or
"stop serving" that spell a group/version (batch/v1, a.b/v1) of rules/served-apis.yaml that no rule
removes in the minor and that replaces none that does. This misses a removal written without its
group/version and lists a field dropped from a served version: the schemas test (README step 3) decides.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # this checkout's scanner, and so its rules/, not an installed kubehop's

from scanner import data  # noqa: E402
from scanner.rulebook import load_rulebook  # noqa: E402

REMOVAL = re.compile(r"remov|no longer|drop|unavailable|stops? serving", re.I)
LOCK = re.compile(r"lock", re.I)
API_REMOVAL = re.compile(r"remov|no longer served|stops? serving", re.I)
GROUP_VERSION = re.compile(r"(?<![\w./-])[a-z][a-z0-9-]*(?:\.[a-z0-9-]+)*/v\d+(?:(?:alpha|beta)\d+)?(?![\w-])")
IDENTIFIER = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9](?![\w*-])"  # --flag
                        r"|(?<![\w./])/[a-z][\w.-]*(?:/[\w.-]+)+"  # /a/path
                        r"|\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b(?!\*)"  # snake_case
                        r"|\b(?=\w*[a-z])[A-Za-z][a-z0-9]*[A-Z][A-Za-z0-9]*\b")  # CamelCase, camelCase
WHEN = ("removed_in", "locked_in", "minor")  # the fields that date a fact to a minor, in every schema
Lines = list[tuple[int, str]]  # (line number in the changelog, its text)


@dataclass
class Fact:
    file: str
    line: int
    id: str
    claims: str
    sources: list[tuple[str, str]]  # (field, URL): removal_source, source, projected_source
    groups: list[list[str]]  # each: the terms one changelog entry must name together ("Kind" + "s?": or plural)
    action: re.Pattern | None  # ... with a word of this in that entry
    named: Lines = field(default_factory=list)
    mentions: Lines = field(default_factory=list)  # lines naming part of a group no entry names whole
    missing: list[str] = field(default_factory=list)


def describe(schema: str, entry: dict, when: str, minor: str) -> tuple[str, str, list[list[str]], re.Pattern | None]:
    """(id, claim, term groups, action word) of one projected entry, by the schema its file obeys."""
    kind = schema.rsplit("/", 1)[-1].removesuffix(".schema.json")
    if kind == "api-rule":
        claim = f"{entry['apiVersion']} {entry['kind']} is no longer served from {minor}"
        return (entry["id"], f"{claim} (replacement: {entry['replacement'] or 'none'})",
                [[entry["apiVersion"], entry["kind"] + "s?"]], REMOVAL)
    if kind == "feature-gates" and when == "locked_in":
        locked = str(entry["locked_to"]).lower()
        return entry["name"], f"feature gate locked to {locked} from {minor}", [[entry["name"]]], LOCK
    if kind == "feature-gates":
        return entry["name"], f"feature gate removed in {minor}", [[entry["name"]]], REMOVAL
    if kind == "component-flags" and "flags" in entry:
        flags = ", ".join(f"--{f}" for f in entry["flags"])
        return (f"{entry['component']} {flags}", f"{entry['component']} no longer has {flags} from {minor}",
                [[f] for f in entry["flags"]], REMOVAL)
    if kind == "component-flags":
        return entry["plugin"], f"admission plugin removed in {minor}", [[entry["plugin"]]], REMOVAL
    if kind == "config-apis" and "api_version" in entry:
        claim = f"{entry['component']} no longer reads {entry['api_version']} ({', '.join(entry['kinds'])})"
        return entry["api_version"], f"{claim} from {minor}", [[entry["api_version"]]], REMOVAL
    if kind == "config-apis" and "plugins" in entry:
        names = entry["plugins"]
        return ", ".join(names), f"scheduler plugins removed in {minor}", [[p] for p in names], REMOVAL
    if kind == "hop-notes":
        terms = dict.fromkeys(IDENTIFIER.findall(f"{entry['title']} {entry['detail']}"))
        return f"note: {entry['title']}", entry["detail"], [[t] for t in terms], None
    name = str(entry.get("id") or entry.get("name") or "?")
    return name, f"{when} {minor} (an entry of {kind}: this script cannot check it)", [], None


def _mappings(document, node):
    """Every mapping of a document with the YAML node it was read from (for its line)."""
    if isinstance(document, dict) and isinstance(node, yaml.MappingNode):
        yield document, node
        for key, value in node.value:
            if key.value in document:
                yield from _mappings(document[key.value], value)
    elif isinstance(document, list) and isinstance(node, yaml.SequenceNode):
        for item, value in zip(document, node.value):
            yield from _mappings(item, value)


def projected_facts(minor: str, root: Path | None = None) -> list[Fact]:
    """Every `status: projected` entry of rules/ (under `root`, kubehop's data by default) dated to `minor`,
    in file and line order."""
    root = root or data.data_root()
    files = []
    for relative in (k for k in data.DATA_KINDS if k.startswith("rules/")):
        path = root / relative
        files += [relative] if path.is_file() else [f"{relative}/{p.name}" for p in path.glob("*.yaml")]
    facts = []
    for relative in sorted(files):
        text = (root / relative).read_text(encoding="utf-8")
        if "projected" not in text:
            continue
        for entry, node in _mappings(data.load(relative, root), yaml.compose(text, Loader=yaml.SafeLoader)):
            if entry.get("status") != "projected":
                continue
            fields = ("removed_in",) if "removal_source" in entry else WHEN
            for when in (w for w in fields if entry.get(w) == minor):
                name, claims, groups, action = describe(data.schema_for(relative), entry, when, minor)
                sources = [(k, entry[k]) for k in ("removal_source", "source", "projected_source") if k in entry]
                facts.append(Fact(relative, node.start_mark.line + 1, name, claims, sources, groups, action))
    return facts


def changelog_entries(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each entry: a list item with its continuation lines, a heading,
    a paragraph."""
    entries: list[tuple[int, list[str]]] = []
    previous = ""
    for number, line in enumerate(text.splitlines(), 1):
        if not entries or re.match(r"\s*([-*+]|\d+\.)\s|#", line) or (not previous.strip() and line[:1].strip()):
            entries.append((number, [line]))
        else:
            entries[-1][1].append(line)
        previous = line
    return entries


def _term(term: str) -> re.Pattern:
    word = re.escape(term.removesuffix("s?")) + ("s?" if term.endswith("s?") else "")
    return re.compile(rf"(?<![A-Za-z0-9_-])(?:--)?{word}(?![A-Za-z0-9_-])")


def _lines(start: int, lines: list[str], patterns: list[re.Pattern]) -> Lines:
    return [(start + i, line.strip()) for i, line in enumerate(lines) if any(p.search(line) for p in patterns)]


def check(fact: Fact, entries: list[tuple[int, list[str]]]) -> None:
    """Fill the fact's `named`, `mentions` and `missing` from the changelog's entries."""
    for group in fact.groups:
        patterns = [_term(t) for t in group]
        # a mention: the first term; for an apiVersion, also its group's first word with its bare version
        # ("`kubeadm`: Removed the `v1beta3` API" for kubeadm.k8s.io/v1beta3)
        group_name, _, version = group[0].rpartition("/")
        loose = [[patterns[0]]] + ([[_term(group_name.split(".")[0]), _term(version)]] if group_name else [])
        hits: Lines = []
        partial: Lines = []
        for start, lines in entries:
            text = "\n".join(lines)
            found = [bool(p.search(text)) for p in patterns]
            rest = text  # the action word outside the terms: "GateLocked" does not say it is locked
            for pattern in patterns:
                rest = pattern.sub(" ", rest)
            if all(found) and (fact.action is None or fact.action.search(rest)):
                hits += _lines(start, lines, patterns)
            elif any(all(p.search(text) for p in some) for some in loose):
                partial += _lines(start, lines, [p for some in loose for p in some])
        fact.named += hits
        if not hits:
            fact.missing.append(" + ".join(t.removesuffix("s?") for t in group))
            fact.mentions += partial
    if not fact.groups:
        fact.missing.append("nothing to look for")


def unlisted_removals(minor: str, entries: list[tuple[int, list[str]]]) -> list[tuple[int, str, str]]:
    """(line, group/version, what the rules say) of each removal an entry states that no rule has (see --help)."""
    book = load_rulebook()
    removed = [r for r in book.rules() if r.removed_in is not None and str(r.removed_in) == minor]
    skip = {r.api_version for r in removed} | {r.replacement for r in removed}
    leads = []
    for start, lines in entries:
        text = "\n".join(lines)
        if not API_REMOVAL.search(text):
            continue
        for gv in dict.fromkeys(GROUP_VERSION.findall(text)):
            if gv in skip or gv not in book.served.group_versions():
                continue
            other = sorted({str(r.removed_in) for r in book.rules() if r.api_version == gv and r.removed_in})
            line = next(start + i for i, t in enumerate(lines) if gv in t)
            leads.append((line, gv, f"rules say removed in {', '.join(other)}" if other else "no rule removes it"))
    return leads


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."


def _show(fact: Fact, out: list[str], checked: bool = False, limit: int = 3) -> None:
    out.append(f"{fact.file}:{fact.line}  {fact.id}")
    out.append(f"    claims: {_cut(fact.claims, 160)}")
    out += [f"    {key}: {url}" for key, url in fact.sources]
    if not checked:
        return
    wanted = "; ".join(" + ".join(t.removesuffix("s?") for t in group) for group in fact.groups) or "-"
    action = {REMOVAL: ", with a removal word", LOCK: ', with "lock"'}.get(fact.action, "")
    out.append(f"    looked for: {_cut(wanted, 130)}{action}")
    if fact.missing:
        out.append(f"    not named: {_cut('; '.join(fact.missing), 140)}")
    for label, lines in (("named at", fact.named), ("mentioned at", fact.mentions)):
        unique = sorted(set(lines))
        out += [f"    {label} line {n}: {_cut(t, 140)}" for n, t in unique[:limit]]
        if len(unique) > limit:
            out.append(f"    ... and {len(unique) - limit} more lines")


def report(minor: str, changelog: str | None = None, text: str | None = None,
           root: Path | None = None) -> tuple[int, str]:
    """(exit code, output) of a run: the listing, or the check against a changelog's `text`."""
    facts = projected_facts(minor, root)
    files = list(dict.fromkeys(f.file for f in facts))
    if text is None:
        out = [f"{len(facts)} projected facts about Kubernetes {minor} in {len(files)} files"]
        for file in files:
            out.append(f"\n== {file}")
            for fact in (f for f in facts if f.file == file):
                _show(fact, out)
        return 0, "\n".join(out) + "\n"
    entries = changelog_entries(text)
    for fact in facts:
        check(fact, entries)
    unconfirmed = [f for f in facts if f.missing]
    named = [f for f in facts if not f.missing]
    out = [f"{len(facts)} projected facts about Kubernetes {minor}: {changelog} names {len(named)}, "
           f"not {len(unconfirmed)}"]
    for title, group in (("Not confirmed by this changelog", unconfirmed), ("Named by this changelog", named)):
        out.append(f"\n== {title} ({len(group)})")
        for fact in group:
            _show(fact, out, checked=True)
    leads = unlisted_removals(minor, entries)
    out.append(f"\n== Removals this changelog states that no rule has for {minor} ({len(leads)}: leads, see --help)")
    out += [f"{changelog}:{line}  {gv}: {said}" for line, gv, said in leads]
    return (1 if unconfirmed else 0), "\n".join(out) + "\n"


def _read(path: str) -> str:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ValueError(f"--changelog {path}: cannot read it: {err}") from None
    if text.strip():
        return text
    raise ValueError(f"--changelog {path}: the file is empty")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minor", required=True, help="the minor, e.g. 1.38")
    parser.add_argument("--changelog", metavar="PATH", help="CHANGELOG-1.NN.md or the release-notes draft")
    args = parser.parse_args(argv)
    try:
        if not re.fullmatch(r"1\.\d+", args.minor):
            raise ValueError(f"--minor {args.minor}: not a minor such as 1.38")
        code, output = report(args.minor, args.changelog, _read(args.changelog) if args.changelog else None)
    except ValueError as err:
        print(f"projected_facts: {err}", file=sys.stderr)
        return 2
    sys.stdout.write(output)
    return code


if __name__ == "__main__":
    sys.exit(main())
