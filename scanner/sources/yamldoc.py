"""Turn YAML/JSON text into Manifests, with the line of every key kept.

The hot path of a scan. libyaml (through PyYAML's C loader) composes the
node tree, whose nodes carry their line and column; Python objects are built
from it only when a check asks (`construct`). Every file is also checked for
what libyaml lets through but Kubernetes would not accept or a scanner should
not trust: duplicate keys, unknown tags, alias bombs and absurd nesting.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.model import Diagnostic, Manifest, Origin

try:  # libyaml is what makes parsing fast; the pure-Python loader is the fallback.
    _Loader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader

# Kubernetes objects are a few dozen levels deep at most; libyaml itself
# crashes (C stack) on flow nesting in the tens of thousands.
MAX_DEPTH = 256
# What an alias-expanded document may reach before it is refused ("billion laughs"): nodes, and
# characters of scalar text (one long string aliased many times is as bad as many nodes). A document
# without aliases is never bigger than its file, which read_file already bounds.
MAX_EXPANDED_NODES = 1_000_000
MAX_EXPANDED_CHARS = 20 * 1024 * 1024

_TOO_DEEP = f"nesting deeper than {MAX_DEPTH} levels; document skipped"
_LIBYAML_DEPTH_LIMIT = "exceeded maximum nesting depth"  # the limit newer libyaml builds stop at

_DUPLICATE_ANCHOR = "found duplicate anchor"

_STD_TAG = "tag:yaml.org,2002:"
_DOC_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:=-][^}]*)?\}")

_scalar_constructor = yaml.constructor.SafeConstructor()


class TemplateSyntax(Exception):
    """The text is a Go/Helm template, not YAML: it must be rendered before it can be read."""


class DocumentProblem(Exception):
    """A document that cannot be trusted; its message is the diagnostic."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line


def read_text(text: str, path: str, documents: list[Any] | None = None) -> tuple[list[Manifest], list[Diagnostic]]:
    """Every Kubernetes object in `text`, and what was wrong with the text.

    `documents`, when given, receives the root node of every trusted document, object or not."""
    nodes, diagnostics = compose_documents(text, path)
    if documents is not None:
        documents.extend(nodes)
    manifests: list[Manifest] = []
    for node in nodes:
        manifests.extend(_manifests_of(node, path, diagnostics))
    return manifests, diagnostics


def compose_documents(text: str, path: str, anchors_renamed: bool = False) -> tuple[list[Any], list[Diagnostic]]:
    """The root node of every document that can be trusted, Kubernetes object or not."""
    diagnostics: list[Diagnostic] = []
    _check_flow_depth(text, path)
    maybe_template = "{{" in text
    try:
        nodes = list(_compose_all(text))
    except yaml.YAMLError as err:
        if maybe_template:
            raise TemplateSyntax() from err
        if _DUPLICATE_ANCHOR in str(err) and not anchors_renamed:
            return compose_documents(_renamed_duplicate_anchors(text), path, anchors_renamed=True)
        # One broken document must not hide the others: parse them one by one.
        nodes = []
        for chunk_nodes, problem in _compose_by_document(text):
            nodes.extend(chunk_nodes)
            if problem is not None:
                diagnostics.append(yaml_error(path, problem))
        if not diagnostics:  # pragma: no cover - the splitter finds what the whole parse did
            diagnostics.append(yaml_error(path, err))
    if maybe_template and any(_templated(node) for node in nodes):
        raise TemplateSyntax()
    trusted: list[Any] = []
    check_tags = "!" in text
    for node in nodes:
        found: list[Diagnostic] = []
        try:
            _inspect(node, check_tags, path, found)
        except DocumentProblem as problem:
            diagnostics.append(Diagnostic(path, str(problem), problem.line))
            continue
        if found and _is_object(node):
            # Duplicate keys and odd tags matter only where Kubernetes reads the document; a values
            # file or a CI config holding them is none of kubehop's business.
            diagnostics.extend(found)
        trusted.append(node)
    return trusted, diagnostics


def load_data(text: str, path: str) -> Any:
    """The first YAML document of `text` as plain data (a Chart.yaml, a kustomization, a
    configuration), with the guards manifests get: nesting depth, alias bombs, recursive aliases.
    DocumentProblem when it cannot be read or trusted."""
    _check_flow_depth(text, path)
    try:
        loader = _Loader(text)
        try:
            root = loader.get_node() if loader.check_node() else None
        finally:
            loader.dispose()
    except yaml.YAMLError as err:
        problem = yaml_error(path, err)
        raise DocumentProblem(problem.message, problem.line) from None
    if root is None:
        return None
    _inspect(root, False, path, [])
    return construct(root)


def _is_object(node: Any) -> bool:
    return bool(scalar(mapping_get(node, "apiVersion")) and scalar(mapping_get(node, "kind")))


def _compose_all(text: str) -> Iterator[Any]:
    loader = _Loader(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is not None:
                yield node
    finally:
        loader.dispose()


def _renamed_duplicate_anchors(text: str) -> str:
    """YAML 1.2 (and go-yaml, which Kubernetes and Flux parse with) lets a later `&name` redefine
    an anchor; PyYAML refuses it. Each redefinition gets a name of its own, and the aliases after
    it follow it, so the document means what the API server reads. Lines stay where they were."""
    edits: list[tuple[int, int, str]] = []
    current: dict[str, str] = {}
    defined: dict[str, int] = {}
    try:
        for token in yaml.scan(text, Loader=_Loader):
            if isinstance(token, (yaml.DocumentStartToken, yaml.DocumentEndToken)):
                current, defined = {}, {}
            elif isinstance(token, yaml.AnchorToken):
                count = defined[token.value] = defined.get(token.value, 0) + 1
                current[token.value] = token.value if count == 1 else f"{token.value}-kubehop{count}"
                edits.append((token.start_mark.index, token.end_mark.index, "&" + current[token.value]))
            elif isinstance(token, yaml.AliasToken) and token.value in current:
                edits.append((token.start_mark.index, token.end_mark.index, "*" + current[token.value]))
    except yaml.YAMLError:
        return text  # broken in another way too: reported as it is
    for start, end, replacement in reversed(edits):
        text = text[:start] + replacement + text[end:]
    return text


def _compose_by_document(text: str):
    """Parse each `---` separated chunk on its own; line numbers stay true."""
    starts = [0] + [m.start() for m in _DOC_SEPARATOR.finditer(text) if m.start() > 0]
    for begin, end in zip(starts, starts[1:] + [len(text)]):
        # Pad with newlines so that marks carry the line numbers of the whole file.
        chunk = "\n" * text.count("\n", 0, begin) + text[begin:end]
        nodes: list[Any] = []
        try:
            for node in _compose_all(chunk):
                nodes.append(node)
        except yaml.YAMLError as err:
            yield nodes, err
            continue
        yield nodes, None


def _templated(root: Any) -> bool:
    """Template actions where YAML would not keep them as text: in a plain (unquoted) scalar, or
    `{{ x }}` read as a flow mapping whose key is a mapping. Quoted and block strings holding
    `{{ $labels.x }}` (alerting rules, for one) are ordinary YAML."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if id(node) in seen:  # an alias: its node was looked at (and may hold itself)
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if node.style is None and "{{" in node.value:
                return True
        elif isinstance(node, MappingNode):
            for key, value in node.value:
                if isinstance(key, MappingNode) and node.flow_style:
                    return True
                stack.extend((key, value))
        elif isinstance(node, SequenceNode):
            stack.extend(node.value)
    return False


def yaml_error(path: str, err: yaml.YAMLError) -> Diagnostic:
    """'invalid YAML: <problem>' at the line libyaml names."""
    mark = getattr(err, "problem_mark", None) or getattr(err, "context_mark", None)
    problem = getattr(err, "problem", None) or str(err)
    context = getattr(err, "context", None)
    if _LIBYAML_DEPTH_LIMIT in problem:
        # Newer libyaml stops at a nesting limit of its own before kubehop's depth check sees the
        # tree: the same reason, worded the same way whichever parser stops first.
        return Diagnostic(path, _TOO_DEEP, mark.line + 1 if mark else None)
    text = f"invalid YAML: {context + ', ' if context else ''}{problem}"
    return Diagnostic(path, text.replace("\n", " "), mark.line + 1 if mark else None)


def _check_flow_depth(text: str, path: str) -> None:
    # Only files with many brackets pay for the exact count.
    if text.count("[") + text.count("{") < MAX_DEPTH:
        return
    depth = 0
    for char in re.findall(r"[\[\]{}]", text):
        depth += 1 if char in "[{" else -1
        if depth > MAX_DEPTH:
            raise DocumentProblem(f"nesting deeper than {MAX_DEPTH} levels; file not parsed")


def _inspect(root: Any, check_tags: bool, path: str, diagnostics: list[Diagnostic]) -> None:
    """One pass over the tree: depth, duplicate keys, unknown tags, aliases."""
    seen: set[int] = set()
    aliased = False
    stack = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            aliased = True
            continue
        seen.add(id(node))
        if depth > MAX_DEPTH:
            raise DocumentProblem(_TOO_DEEP, node.start_mark.line + 1)
        if check_tags and not node.tag.startswith(_STD_TAG):
            diagnostics.append(Diagnostic(
                path, f"unknown YAML tag {node.tag}: value read as plain "
                      f"{'text' if isinstance(node, ScalarNode) else 'data'}",
                node.start_mark.line + 1, level="notice"))
        if isinstance(node, MappingNode):
            pairs = node.value
            if len(pairs) > 1 and len({k.value for k, _ in pairs if isinstance(k, ScalarNode)}) < len(pairs):
                _report_duplicates(pairs, path, diagnostics)
            for key, value in pairs:
                stack.append((value, depth + 1))
                if not isinstance(key, ScalarNode):
                    stack.append((key, depth + 1))
        elif isinstance(node, SequenceNode):
            stack.extend((item, depth + 1) for item in node.value)
    if aliased:
        _check_expansion(root)


def _report_duplicates(pairs, path: str, diagnostics: list[Diagnostic]) -> None:
    seen: set[str] = set()
    for key, _ in pairs:
        if not isinstance(key, ScalarNode) or key.value == "<<":
            continue
        if key.value in seen:
            diagnostics.append(Diagnostic(
                path, f"duplicate key {key.value!r} (Kubernetes rejects it; the last value was used)",
                key.start_mark.line + 1))
        seen.add(key.value)


def _check_expansion(root: Any) -> None:
    """Refuse a document whose aliases expand it past the limits, or that holds itself."""
    nodes, chars = expanded_size(root)
    if nodes is None:
        raise DocumentProblem("an alias refers to a node that holds it (recursive alias); document skipped",
                              root.start_mark.line + 1)
    if nodes > MAX_EXPANDED_NODES or chars > MAX_EXPANDED_CHARS:
        raise DocumentProblem(
            f"aliases expand to more than {MAX_EXPANDED_NODES:,} nodes or {MAX_EXPANDED_CHARS // 1048576} MiB "
            f"of text (alias bomb); document skipped", root.start_mark.line + 1)


def expanded_size(root: Any) -> tuple[int | None, int]:
    """(nodes, scalar characters) of the tree with every alias expanded, each capped just past its
    limit; nodes is None when the tree holds itself (an alias inside the node it names)."""
    sizes: dict[int, tuple[int, int]] = {}
    open_: set[int] = set()  # nodes whose children are being sized: meeting one again is a cycle
    # Post-order without recursion: children are sized before their parent.
    stack = [(root, False)]
    while stack:
        node, ready = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        children = _children(node)
        if ready:
            open_.discard(key)
            nodes = min(1 + sum(sizes[id(c)][0] for c in children), MAX_EXPANDED_NODES + 1)
            own = len(node.value) if isinstance(node, ScalarNode) else 0
            chars = min(own + sum(sizes[id(c)][1] for c in children), MAX_EXPANDED_CHARS + 1)
            sizes[key] = (nodes, chars)
            continue
        if key in open_:
            return None, 0
        open_.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def _children(node: Any) -> list:
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


# --- Kubernetes objects in a document -------------------------------------------------------------

def mapping_get(node: Any, key: str) -> Any:
    """The value node under `key` in a mapping node (the last one, as Kubernetes reads it), or None."""
    found = None
    if isinstance(node, MappingNode):
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value == key:
                found = v
    return found


def key_node(node: Any, key: str) -> Any:
    """The key node itself (its mark is the line a person looks at)."""
    if isinstance(node, MappingNode):
        for k, _ in reversed(node.value):
            if isinstance(k, ScalarNode) and k.value == key:
                return k
    return None


def locate(node: Any, path: Iterable[str | int]) -> Any:
    """The node a person looks at for `path`: the key of a mapping entry, or a sequence item.

    Stops at the deepest node found when the path leaves the tree (a merged or aliased key).
    """
    found = node
    for step in path:
        if isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
            node = found = node.value[step]
        elif isinstance(node, MappingNode) and key_node(node, str(step)) is not None:
            found, node = key_node(node, str(step)), mapping_get(node, str(step))
        else:
            break
    return found


def scalar(node: Any) -> str | None:
    return node.value if isinstance(node, ScalarNode) and node.tag != _STD_TAG + "null" else None


def _manifests_of(node: Any, path: str, diagnostics: list[Diagnostic]) -> Iterator[Manifest]:
    api_version = scalar(mapping_get(node, "apiVersion"))
    kind = scalar(mapping_get(node, "kind"))
    if not api_version or not kind:
        return  # not a Kubernetes object (values files, CI configs...)
    if kind.endswith("List"):
        items = mapping_get(node, "items")
        if isinstance(items, SequenceNode):
            for item in items.value:
                yield from _manifests_of(item, path, diagnostics)
            return
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if _PLACEHOLDER.search(value):
            diagnostics.append(Diagnostic(
                path, f"{field} is a substitution placeholder ({value}); object not checked",
                key_node(node, field).start_mark.line + 1, level="notice"))
            return
    metadata = mapping_get(node, "metadata")
    mark = key_node(node, "apiVersion").start_mark
    for field in ("name", "namespace"):
        value = mapping_get(metadata, field)
        if value is not None and not isinstance(value, ScalarNode):
            diagnostics.append(Diagnostic(
                path, f"metadata.{field} is a {'list' if isinstance(value, SequenceNode) else 'mapping'}, not a "
                      f"string (Kubernetes rejects it); object read without it", value.start_mark.line + 1,
                level="notice"))
    yield Manifest(
        api_version=api_version,
        kind=kind,
        name=scalar(mapping_get(metadata, "name")) or scalar(mapping_get(metadata, "generateName")),
        namespace=scalar(mapping_get(metadata, "namespace")),
        origin=Origin(path, mark.line + 1, mark.column + 1),
        node=node,
    )


# --- Python objects, on demand --------------------------------------------------------------------

_SCALARS = {
    _STD_TAG + "str": lambda n: n.value,
    _STD_TAG + "null": lambda n: None,
    _STD_TAG + "bool": _scalar_constructor.construct_yaml_bool,
    _STD_TAG + "int": _scalar_constructor.construct_yaml_int,
    _STD_TAG + "float": _scalar_constructor.construct_yaml_float,
    # Kubernetes reads timestamps and binary as strings (JSON has neither).
    _STD_TAG + "timestamp": lambda n: n.value,
    _STD_TAG + "binary": lambda n: n.value,
}


def construct(node: Any, _memo: dict | None = None) -> Any:
    """Plain Python data (dict, list, str, int...) for a composed node.

    Aliased nodes become the same object, so a document is never expanded;
    depth was bounded by `_inspect` before any node gets here.
    """
    memo = {} if _memo is None else _memo
    if id(node) in memo:
        return memo[id(node)]
    if isinstance(node, ScalarNode):
        convert = _SCALARS.get(node.tag)
        try:
            value = convert(node) if convert else node.value
        except (ValueError, yaml.YAMLError):
            value = node.value
        return value
    if isinstance(node, SequenceNode):
        result: Any = []
        memo[id(node)] = result
        result.extend(construct(item, memo) for item in node.value)
        return result
    result = {}
    memo[id(node)] = result
    merged: dict = {}
    for key_node_, value_node in node.value:
        if key_node_.tag == _STD_TAG + "merge":
            for source in (value_node.value if isinstance(value_node, SequenceNode) else [value_node]):
                if isinstance(source, MappingNode):
                    merged = {**construct(source, memo), **merged}
            continue
        key = construct(key_node_, memo)
        if not isinstance(key, (str, int, float, bool)) and key is not None:
            key = str(key)
        result[key] = construct(value_node, memo)
    for key, value in merged.items():
        result.setdefault(key, value)
    return result
