"""Turn YAML/JSON text into Manifests, with the line of every key kept.

The hot path of a scan. libyaml (through PyYAML's C loader) composes the
node tree, whose nodes carry their line and column; Python objects are built
from it only when a check asks (`construct`). Every document is also checked for
what libyaml lets through but Kubernetes would not accept or a scanner should
not trust (yamlcheck.py): duplicate keys, unknown tags, alias bombs and
absurd nesting.
"""

from __future__ import annotations

import gc
import re
import sys
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.model import Diagnostic, Manifest, Origin
from scanner.nodes import construct, key_node, mapping_get, scalar
# DocumentProblem: the sources import it from here.
from scanner.sources.yaml.jsonc import settings_without_objects
from scanner.sources.yaml.yamlcheck import DocumentProblem, check_flow_depth, inspect  # noqa: F401
from scanner.yaml_errors import yaml_error

try:  # libyaml is what makes parsing fast; the pure-Python loader is the fallback.
    _BaseLoader = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BaseLoader = yaml.SafeLoader

# The tags of PyYAML's safe resolver, looked up by a scalar's first character as it does, without what
# a loader with path resolvers needs (the safe loader has none): libyaml calls these for every node,
# and they were a fifth of composing a document. The same tag for every node (test_yaml_resolver).
_IMPLICIT = {first: tuple(found) for first, found in _BaseLoader.yaml_implicit_resolvers.items()}
_ANY_FIRST = _IMPLICIT.pop(None, ())
_IMPLICIT = {first: found + _ANY_FIRST for first, found in _IMPLICIT.items()}
_STR, _SEQ, _MAP = _BaseLoader.DEFAULT_SCALAR_TAG, _BaseLoader.DEFAULT_SEQUENCE_TAG, _BaseLoader.DEFAULT_MAPPING_TAG


# Plain scalars repeat (keys above all): the tag of each seen is remembered, up to a bound.
_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_TAGS_MAX = 8192


def _plain_tag(value: str) -> str:
    for tag, regexp in _IMPLICIT.get(value[:1], _ANY_FIRST):
        if regexp.match(value):
            return tag
    return _STR


def plain_tag(value: str) -> str:
    """The tag the loader gives `value` written unquoted (int, float, bool, null, str...)."""
    return _plain_tag(value)


class _Loader(_BaseLoader):  # type: ignore[misc, valid-type]
    def resolve(self, kind: type, value: str | None, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            if implicit[0]:
                tag = _PLAIN_TAGS.get(value)  # type: ignore[arg-type]
                if tag is None:
                    tag = _plain_tag(value)  # type: ignore[arg-type]
                    if len(_PLAIN_TAGS) < _PLAIN_TAGS_MAX:
                        _PLAIN_TAGS[value] = tag  # type: ignore[index]
                return tag
            return _STR
        return _SEQ if kind is SequenceNode else _MAP

    def descend_resolver(self, current_node: Any, current_index: Any) -> None:
        pass

    def ascend_resolver(self) -> None:
        pass


assert not _BaseLoader.yaml_path_resolvers, "path resolvers would need PyYAML's own resolve"

_DUPLICATE_ANCHOR = "found duplicate anchor"

_DOC_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$", re.MULTILINE)
_PLACEHOLDER = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]*(?:[:=-][^}]*)?\}")


def substitution_placeholder(value: str) -> str | None:
    """The first `${VAR}` (Flux postBuild, envsubst) in `value`: filled in before the object is applied."""
    found = _PLACEHOLDER.search(value)
    return found.group(0) if found else None



# Fills in an object's node before it is read: (node, the diagnostics) -> (the node to read, Manifest.filled).
Fill = Callable[[Any, list[Diagnostic]], tuple[Any, "dict | None"]]


class TemplateSyntax(Exception):
    """The text is a Go/Helm template, not YAML: it must be rendered before it can be read."""


def read_text(text: str, path: str, documents: list[Any] | None = None,
              fill: Fill | None = None) -> tuple[list[Manifest], list[Diagnostic]]:
    """Every Kubernetes object in `text`, and what was wrong with the text.

    `documents`, when given, receives the root node of every trusted document, object or not; `fill`, when
    given, fills in each object's node before it is read (sources/postbuild: Flux's substitution)."""
    nodes, diagnostics = compose_documents(text, path)
    if documents is not None:
        documents.extend(nodes)
    manifests: list[Manifest] = []
    for node in nodes:
        manifests.extend(_manifests_of(node, path, diagnostics, fill))
    return manifests, diagnostics


def compose_documents(text: str, path: str, anchors_renamed: bool = False) -> tuple[list[Any], list[Diagnostic]]:
    """The root node of every document that can be trusted, Kubernetes object or not."""
    diagnostics: list[Diagnostic] = []
    check_flow_depth(text, path)
    maybe_template = "{{" in text
    try:
        nodes = list(_compose_all(text))
    except yaml.YAMLError as err:
        # Before the template verdict: a HelmRelease whose values hold Alertmanager's `{{ .Value }}`
        # strings is no template, and its redefined anchors alone stop PyYAML.
        if _DUPLICATE_ANCHOR in str(err) and not anchors_renamed:
            return compose_documents(_renamed_duplicate_anchors(text), path, anchors_renamed=True)
        if maybe_template:
            raise TemplateSyntax() from err
        if path.lower().endswith(".json") and settings_without_objects(text):
            return [], []  # an editor's or tool's JSONC settings (devcontainer.json, tsconfig.json): no manifest
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
    check_tags, anchors = "!" in text, "&" in text
    return [node for node in nodes if _trusted(node, path, check_tags, anchors, diagnostics)], diagnostics


def _trusted(node: Any, path: str, check_tags: bool, anchors: bool, diagnostics: list[Diagnostic]) -> bool:
    """Can the document be trusted (yamlcheck.inspect)? What is wrong with it goes to `diagnostics`."""
    found: list[Diagnostic] = []
    try:
        inspect(node, check_tags, path, found, anchors)
    except DocumentProblem as problem:
        diagnostics.append(Diagnostic(path, str(problem), problem.line))
        return False
    if found and _is_object(node):
        # Duplicate keys and odd tags matter only where Kubernetes reads the document; a values
        # file or a CI config holding them is none of kubehop's business.
        diagnostics.extend(found)
    return True


class NotStreamable(Exception):
    """The text has a YAML error somewhere: what read_text makes of it (a renamed anchor, the documents
    around a broken one, a template) is known only from the whole text."""


def stream_text(text: str, path: str, diagnostics: list[Diagnostic],
                fill: Fill | None = None) -> Iterator[tuple[Any, list[Manifest]]]:
    """read_text one document at a time: the root node of each trusted document and its Kubernetes
    objects, each document composed only when the one before has been handed on, so a caller that lets
    go of the nodes never holds a whole file's. What is wrong with the text goes to `diagnostics`.
    Raises DocumentProblem and TemplateSyntax as read_text does, and NotStreamable (after some documents,
    maybe) where read_text would read the whole text again."""
    check_flow_depth(text, path)
    maybe_template = "{{" in text
    try:
        for node, check_tags, anchors in _documents(text):
            if maybe_template and _templated(node):
                raise TemplateSyntax()
            if _trusted(node, path, check_tags, anchors, diagnostics):
                yield node, list(_manifests_of(node, path, diagnostics, fill))
    except yaml.YAMLError as err:
        raise NotStreamable() from err


def _documents(text: str) -> Iterator[tuple[Any, bool, bool]]:
    """Each document's root node, composed in turn, and whether its own text may hold a tag (a `!`) or
    an anchor (a `&`; an alias names an anchor of its own document): a file whose scripts or URLs hold
    either needs the slower inspection only for those documents. Each document's text runs from the end
    of the one before to the end of its root node (its marks count characters; a byte-order mark inside
    the text is not counted, and then the whole text is asked)."""
    check_tags, anchors = "!" in text, "&" in text
    whole = (check_tags or anchors) and "\ufeff" in text
    start = 0
    for node in _compose_all(text):
        if whole or not (check_tags or anchors):
            yield node, check_tags, anchors
            continue
        end = node.end_mark.index
        yield node, check_tags and text.find("!", start, end) >= 0, anchors and text.find("&", start, end) >= 0
        start = end


# A document as stream_text composes it: its root node (None: not trusted) and what is wrong with it.
Composed = tuple[Any, list[Diagnostic]]


def compose_streamable(text: str, path: str) -> list[Composed] | None:
    """Every document stream_text would compose of `text`, ahead of it (sources/files/kept.py: the
    plain files' first reading keeps them for the main read, stream_composed); None where stream_text
    would not stream it (a YAML error). Raises DocumentProblem and TemplateSyntax as stream_text does."""
    check_flow_depth(text, path)
    maybe_template = "{{" in text
    composed: list[Composed] = []
    try:
        for node, check_tags, anchors in _documents(text):
            if maybe_template and _templated(node):
                raise TemplateSyntax()
            problems: list[Diagnostic] = []
            composed.append((node if _trusted(node, path, check_tags, anchors, problems) else None, problems))
    except yaml.YAMLError:
        return None
    return composed


def stream_composed(composed: list[Composed], path: str, diagnostics: list[Diagnostic],
                    fill: Fill | None = None) -> Iterator[tuple[Any, list[Manifest]]]:
    """stream_text of a text whose documents compose_streamable composed: the same, in the same order."""
    for node, problems in composed:
        diagnostics.extend(problems)
        if node is not None:
            yield node, list(_manifests_of(node, path, diagnostics, fill))


def manifests_of(node: Any, path: str) -> list[Manifest]:
    """The Kubernetes objects of one composed document, as read_text reads them (its notices dropped)."""
    return list(_manifests_of(node, path, []))


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Composed YAML nodes form no reference cycles, but a scan (or a fix) makes millions of them and
    the cyclic collector would re-walk those alive on every collection: 3-4x the parse time. Nothing
    is frozen afterwards: what was let go is freed, and repeated runs in one process do not pile up."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_data(text: str, path: str) -> Any:
    """The first YAML document of `text` as plain data (a Chart.yaml, a kustomization, a
    configuration), with the guards manifests get: nesting depth, alias bombs, recursive aliases.
    DocumentProblem when it cannot be read or trusted."""
    check_flow_depth(text, path)
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
    inspect(root, False, path, [])
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


# --- Kubernetes objects in a document -------------------------------------------------------------

def _manifests_of(node: Any, path: str, diagnostics: list[Diagnostic], fill: Fill | None = None) -> Iterator[Manifest]:
    api_version = scalar(mapping_get(node, "apiVersion"))
    kind = scalar(mapping_get(node, "kind"))
    if not api_version or not kind:
        return  # not a Kubernetes object (values files, CI configs...)
    if kind.endswith("List"):
        items = mapping_get(node, "items")
        if isinstance(items, SequenceNode):
            for item in items.value:
                yield from _manifests_of(item, path, diagnostics, fill)
            return
    filled = None
    if fill is not None:
        node, filled = fill(node, diagnostics)
        if filled:
            api_version, kind = scalar(mapping_get(node, "apiVersion")), scalar(mapping_get(node, "kind"))
            if not api_version or not kind:
                return
    for field, value in (("apiVersion", api_version), ("kind", kind)):
        if _PLACEHOLDER.search(value):
            diagnostics.append(Diagnostic(
                path, f"{field} is a substitution placeholder ({value}); object not checked",
                key_node(node, field).start_mark.line + 1, level="notice"))
            return
    metadata = mapping_get(node, "metadata")
    mark = key_node(node, "apiVersion").start_mark
    name_node, namespace_node = mapping_get(metadata, "name"), mapping_get(metadata, "namespace")
    for field, value in (("name", name_node), ("namespace", namespace_node)):
        if value is not None and not isinstance(value, ScalarNode):
            diagnostics.append(Diagnostic(
                path, f"metadata.{field} is a {'list' if isinstance(value, SequenceNode) else 'mapping'}, not a "
                      f"string (Kubernetes rejects it); object read without it", value.start_mark.line + 1,
                level="notice"))
    namespace = scalar(namespace_node)
    manifest = Manifest(  # the strings most objects share are shared: a scan keeps every object's
        api_version=sys.intern(api_version),
        kind=sys.intern(kind),
        name=scalar(name_node) or scalar(mapping_get(metadata, "generateName")),
        namespace=sys.intern(namespace) if namespace else namespace,
        origin=Origin(path, mark.line + 1, mark.column + 1),
        node=node,
    )
    manifest.filled = filled
    yield manifest
