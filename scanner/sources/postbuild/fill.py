"""An object as its Flux Kustomizations apply it: each `${...}` filled in, at the node level, keeping the
line of every node.

kustomize-controller writes each built object out as YAML (kustomize's JSON, through sigs.k8s.io/yaml:
the file's own quotes are gone), substitutes the text, and reads it back. So a string the writer leaves
unquoted (`${version}`, `v${tag}`) is read again as what its new text says: `1.20` a number, `true` a
boolean; a string it quotes (one that starts with `*`, holds `: `) stays a string. A new text that would
change the object's shape there (`a: b` unquoted), or a value a quoted string cannot hold as it is, is
not guessed: the scalar is left as written. An object labelled or annotated
`kustomize.toolkit.fluxcd.io/substitute: disabled` is not filled.

A file several Flux Kustomizations build is one object to kubehop (its file and line): a scalar is
filled in only when every build gives it the same text (a build that does not substitute gives it as
written); where they differ it is left as written, and a notice names it. Correct rather than
complete: each build's value would be another object at the same line, which the findings, the pins
and the plans (one edit per line) cannot tell apart.

Where a person edits a filled-in value is where its one variable is set (a ConfigMap's entry, the
inline `substitute` entry, an env file's line); the `${...}` it replaced is said with it (`via`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.model import Diagnostic, Manifest, Origin
from scanner.nodes import STD_TAG, mapping_get, scalar, value_at
from scanner.paths import where
from scanner.sources.postbuild.builds import OPT_OUT
from scanner.sources.postbuild.envsubst import Broken, Unsure, expand, has_expression
from scanner.sources.yaml.yamldoc import plain_tag

if TYPE_CHECKING:
    from scanner.sources.postbuild.plan import Builder

_FIRST_INDICATORS = frozenset("#,[]{}&*!|>'\"%@`")
_STR = STD_TAG + "str"


def fill_object(node: Any, builders: Sequence["Builder"], path: str, diagnostics: list[Diagnostic],
                line_of: Callable[[Any], int] | None = None,
                origin_of: Callable[[Any], Origin | None] | None = None) -> tuple[Any, dict | None]:
    """The object node with its `${...}` filled in, and {id(filled node): where a person edits it, or
    None}; `node` itself and None when nothing is filled. `line_of(node)`: the node's line in `path`;
    `origin_of(node)`: where a node is written when its marks do not say (a parent's patch)."""
    scalars = _with_expressions(node)
    if not scalars or not builders or _opted_out(node):
        return node, None
    line_of = line_of or (lambda n: n.start_mark.line + 1)
    replaced: dict[int, ScalarNode] = {}
    filled: dict[int, Origin | None] = {}
    differ: list[str] = []
    for scalar, is_key, key in scalars:
        try:
            results = [_expanded(scalar.value, builder) for builder in builders]
        except Broken as err:
            line = line_of(scalar)
            message = f"{_shown(scalar.value)}: {err}: Flux's post-build substitution fails on it " \
                      f"({builders[0].what}); the object is read as written"
            diagnostics.append(Diagnostic(path, message, line, level="notice"))
            return node, None
        except Unsure:
            continue
        texts = {text for text, _ in results}
        if len(texts) > 1:
            differ.append(scalar.value)
            continue
        text = texts.pop()
        if text == scalar.value:
            continue
        new = _node(scalar, text, is_key, results)
        if new is None:
            continue
        replaced[id(scalar)] = new
        at = _where_set(results, scalar, key, path, line_of, builders)
        filled[id(new)] = at if at is not None or origin_of is None else origin_of(scalar)
    if differ:
        shown = ", ".join(_shown(t) for t in sorted(set(differ))[:3]) + (" ..." if len(set(differ)) > 3 else "")
        diagnostics.append(Diagnostic(path, f"{shown}: the Flux Kustomizations that build this file "
                                            f"({', '.join(f'{b.what} at {b.at}' for b in builders[:3])}"
                                            f"{', ...' if len(builders) > 3 else ''}) fill it in differently; "
                                            "read as written", line_of(node), level="notice"))
    if not replaced:
        return node, None
    return _copy(node, replaced, {}), filled


def _cut(text: str) -> str:
    return text if len(text) <= 80 else text[:77] + "..."


def _shown(text: str) -> str:
    return repr(_cut(text))


def _expanded(text: str, builder: "Builder") -> tuple[str, tuple]:
    """The text one build gives the scalar, and the variables it took."""
    if builder.runs is False:
        return text, ()
    if builder.runs is None:
        raise Unsure(builder.why_unsure)
    expansion = expand(text, builder.lookup)
    return expansion.text, expansion.used


def _node(scalar: ScalarNode, text: str, is_key: bool, results: list) -> ScalarNode | None:
    """The filled-in scalar, typed as Flux reads it back; None when kubehop cannot tell how it reads."""
    original = scalar.value
    if "\n" in original:  # written as a literal block: any text without a line break stays a string
        return ScalarNode(_STR, text, scalar.start_mark, scalar.end_mark, "|")
    if _plain(original):
        if not (_plain(text) or (text == "" and not is_key)):
            return None
        tag = _STR if is_key else plain_tag(text)
        return ScalarNode(tag, text, scalar.start_mark, scalar.end_mark, None)
    inserted = "".join(v.text for _, used in results for v in used)
    if "'" in inserted or "\\" in inserted or '"' in inserted or not text.isprintable():
        return None
    return ScalarNode(_STR, text, scalar.start_mark, scalar.end_mark, "'")


def _plain(text: str) -> bool:
    """Would sigs.k8s.io/yaml write `text` unquoted as a block mapping value (go-yaml's emitter)?"""
    if not text or text.startswith(("---", "...")) or not text.isprintable():
        return False
    if text[0] in " " or text[-1] in " " or text[0] in _FIRST_INDICATORS:
        return False
    if text[0] in "?:-" and text[1:2] in ("", " "):
        return False
    for i, c in enumerate(text):
        if c == ":" and i > 0 and text[i + 1:i + 2] in ("", " "):
            return False
        if c == "#" and i > 0 and text[i - 1] == " ":
            return False
    return True


def _where_set(results: list, scalar: ScalarNode, key: str, path: str, line_of, builders) -> Origin | None:
    """The entry that sets the value, when one variable does (the same one in every build)."""
    used = {v.origin for _, taken in results for v in taken}
    if len(used) != 1 or any(len(taken) != 1 for _, taken in results):
        return None
    origin = used.pop()
    what = builders[0].what + (f" and {len(builders) - 1} more" if len(builders) > 1 else "")
    context = f"{key}{': ' if key else ''}{_cut(scalar.value)} at {where(path, line_of(scalar))}, " \
              f"filled in by {what}"
    return Origin(origin.path, origin.line, origin.column, context)


def _with_expressions(root: Any) -> list[tuple[ScalarNode, bool, str]]:
    """(scalar, is a key, its key) of every scalar Flux's substitution would change."""
    found, stack, seen = [], [(root, "")], set()
    while stack:
        node, key = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, ScalarNode):
            if has_expression(node.value):
                found.append((node, False, key))
        elif isinstance(node, MappingNode):
            for k, v in node.value:
                if isinstance(k, ScalarNode):
                    if has_expression(k.value):
                        found.append((k, True, ""))
                    stack.append((v, k.value))
                else:
                    stack.extend(((k, ""), (v, "")))
        elif isinstance(node, SequenceNode):
            stack.extend((item, key) for item in node.value)
    return found


def _opted_out(node: Any) -> bool:
    metadata = mapping_get(node, "metadata")
    return any(isinstance(v := value_at(metadata, where_, OPT_OUT), ScalarNode) and v.value == "disabled"
               for where_ in ("annotations", "labels"))


def _copy(node: Any, replaced: dict[int, ScalarNode], memo: dict[int, Any]) -> Any:
    """`node` with the scalars of `replaced` swapped in; containers copied, aliases kept shared."""
    if id(node) in memo:
        return memo[id(node)]
    if isinstance(node, ScalarNode):
        return replaced.get(id(node), node)
    if isinstance(node, SequenceNode):
        copy = SequenceNode(node.tag, [], node.start_mark, node.end_mark, node.flow_style)
        memo[id(node)] = copy
        copy.value = [_copy(item, replaced, memo) for item in node.value]
        return copy
    if isinstance(node, MappingNode):
        copy = MappingNode(node.tag, [], node.start_mark, node.end_mark, node.flow_style)
        memo[id(node)] = copy
        copy.value = [(_copy(k, replaced, memo), _copy(v, replaced, memo)) for k, v in node.value]
        return copy
    return node


def filled_in(manifest: Manifest, builders: Sequence["Builder"], diagnostics: list[Diagnostic]) -> Manifest:
    """An object a kustomize build gave (its nodes are lines of the build's output), filled in."""
    node, filled = fill_object(manifest.node, builders, manifest.origin.path, diagnostics,
                               lambda n: manifest.origin_at(n).line)
    if not filled:
        return manifest
    api_version, kind = scalar(mapping_get(node, "apiVersion")), scalar(mapping_get(node, "kind"))
    if not api_version or not kind:
        return manifest
    metadata = mapping_get(node, "metadata")
    name, namespace = (mapping_get(metadata, key) for key in ("name", "namespace"))
    made = Manifest(api_version, kind, scalar(name) if id(name) in filled else manifest.name,
                    scalar(namespace) if id(namespace) in filled else manifest.namespace,  # a targetNamespace's
                    manifest.origin, node, manifest.line_map)
    made.patch, made.text_only, made.patched_at, made.filled = manifest.patch, manifest.text_only, \
        manifest.patched_at, filled
    return made
