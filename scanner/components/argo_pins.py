"""The charts an Argo CD Application or ApplicationSet deploys: its sources' `chart`, `repoURL` and
`targetRevision` (components.detect makes them pins).

An ApplicationSet's template often names its chart by its generators' parameters
(`chart: '{{values.addonChart}}'`, `targetRevision: '{{ .values.addonChartVersion }}'`): each parameter
set the tree writes (sources.reach.appsets.parameter_sets: a `list` generator's elements, a `clusters`
generator's `values` and the tree's cluster Secrets it selects, those of a `merge` or `matrix` of them)
is put in, and each distinct chart and version is a pin, at the line of the value that sets the version
(`via`: where the template uses it), as a Flux variable's is. A parameter nothing in the tree sets (a
label or annotation of a cluster Secret made outside the tree, a generator that asks an outside
service) names no chart: a notice says which ApplicationSet and which parameter, and no pin is made up
of the template's text; a version it does not set is the template's text, which no known release
matches (unknown, never fine).

A chart path under an OCI registry (`chart: karpenter/karpenter` from `public.ecr.aws`, as Argo CD joins
them) is the chart `karpenter` from the repository `public.ecr.aws/karpenter`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

from yaml.nodes import MappingNode, SequenceNode

from scanner.model import Diagnostic, Manifest, Origin
from scanner.nodes import mapping_get, scalar, sequence_items, value_at
from scanner.paths import where

_FIELDS = ("chart", "repoURL", "targetRevision")
_GENERATORS = ("list", "clusters", "git", "matrix", "merge")


@dataclass(frozen=True)
class ArgoChart:
    """One chart a source deploys, with the nodes its pin is read from."""

    source: Any  # the source's node (its helm values)
    chart: str
    repository: str | None
    version: str | None  # as filled in; None: the version node's own text
    version_node: Any
    chart_node: Any
    at: Origin | None  # where the version is edited when not at the version node (a generator's value)


def argo_charts(manifest: Manifest, secrets: Sequence[Manifest], notices: list[Diagnostic]) -> Iterator[ArgoChart]:
    """The charts of an Application's sources, or of an ApplicationSet's template filled in by its
    generators; what the tree does not fill is told in `notices`."""
    spec = value_at(manifest.node, "spec")
    if manifest.kind == "ApplicationSet":
        spec = value_at(spec, "template", "spec")
    for source in [value_at(spec, "source"), *sequence_items(value_at(spec, "sources"))]:
        nodes = {key: value_at(source, key) for key in _FIELDS}
        texts = {key: scalar(node) or "" for key, node in nodes.items()}
        if not texts["chart"]:
            continue
        if manifest.kind != "ApplicationSet" or not any("{{" in text for text in texts.values()):
            chart, repository = oci_chart(texts["chart"], texts["repoURL"] or None)
            yield ArgoChart(source, chart, repository, None, nodes["targetRevision"], nodes["chart"],
                            manifest.filled_at(nodes["targetRevision"]))
            continue
        yield from _filled_charts(manifest, source, nodes, texts, secrets, notices)


def cluster_secrets(groups: Iterable[Iterable[Manifest]]) -> list[Manifest]:
    """The Argo CD cluster Secrets among the tree's Secrets (an ApplicationSet's `clusters` generator reads them)."""
    from scanner.sources.reach.appsets import is_cluster_secret

    return [m for group in groups for m in group if is_cluster_secret(m)]


def oci_chart(chart: str, repository: str | None) -> tuple[str, str | None]:
    """(chart, repository) of a source: a chart path under a registry is the last part of it."""
    if "/" not in chart or not repository or "{{" in chart:
        return chart, repository
    folder, _, name = chart.rpartition("/")
    return name, f"{repository.rstrip('/')}/{folder.strip('/')}"


def _filled_charts(manifest: Manifest, source: Any, nodes: dict, texts: dict, secrets: Sequence[Manifest],
                   notices: list[Diagnostic]) -> Iterator[ArgoChart]:
    from scanner.sources.reach.appsets import fill_text, parameter_sets

    seen: set[tuple] = set()
    told: set[str] = set()

    def tell(key: str, parameter: str) -> None:
        if parameter in told:
            return
        told.add(parameter)
        node = nodes[key]
        line = manifest.origin_at(node).line if node is not None else manifest.origin.line
        what = "a chart it deploys is not named" if key == "chart" else "a version of its chart is unknown"
        why = f"uses {parameter}, which kubehop does not evaluate" if parameter.startswith("{{") else \
            f"takes {parameter}, which nothing in the tree sets (a cluster Secret's label or annotation, or a " \
            "generator kubehop does not read)"
        notices.append(Diagnostic(manifest.origin.path, f"{manifest.object_ref}: {key} '{texts[key]}' {why}: {what}",
                                  line, level="notice"))

    sets = parameter_sets(manifest, secrets)
    if not sets:
        notices.append(Diagnostic(manifest.origin.path, f"{manifest.object_ref}: its generators give no parameter "
                                  f"set kubehop reads; the chart '{texts['chart']}' of its template is not named",
                                  manifest.origin.line, level="notice"))
    for params in sets:
        chart = fill_text(texts["chart"], params)
        if chart.text is None:
            tell("chart", chart.unfilled)
            continue
        repository = fill_text(texts["repoURL"], params).text if texts["repoURL"] else None
        version = fill_text(texts["targetRevision"], params)
        if version.text is None:
            tell("targetRevision", version.unfilled)
        name, repository = oci_chart(chart.text, repository)
        at = _set_at(manifest, version.at, nodes["targetRevision"], texts["targetRevision"]) \
            if version.text is not None else None
        key = (name, repository, version.text, at)
        if key in seen:
            continue
        seen.add(key)
        yield ArgoChart(source, name, repository if repository is not None else texts["repoURL"] or None,
                        version.text if version.text is not None else texts["targetRevision"] or None,
                        nodes["targetRevision"], nodes["chart"], at)


def _set_at(manifest: Manifest, value: Any, used: Any, template: str) -> Origin | None:
    """Where the value that fills the version is set (the ApplicationSet's generator, or the cluster
    Secret it reads), `via` naming where it is used."""
    owner = getattr(value, "owner", None) or manifest
    node = _node_at(owner.node, value.path) if value is not None else None
    if node is None:
        return manifest.filled_at(used) if used is not None else None
    found = owner.origin_at(node)
    use = manifest.origin_at(used)
    by = f"{_generator(value.path)} of {manifest.object_ref}" if owner is manifest else \
        f"a clusters generator of {manifest.object_ref} from {owner.object_ref}"
    via = f"targetRevision: {template} at {where(use.path, use.line)}, filled in by {by}"
    return Origin(found.path, found.line, found.column, via)


def _node_at(root: Any, path: tuple) -> Any:
    node = root
    for step in path:
        if isinstance(node, SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
            node = node.value[step]
        elif isinstance(node, MappingNode):
            node = mapping_get(node, str(step))
        else:
            return None
    return node


def _generator(path: tuple) -> str:
    """"the clusters generator spec.generators[0].merge.generators[1]" for a value's key path."""
    parts: list[str] = []
    kind = "a"
    for step in path:
        if isinstance(step, int):
            parts[-1] += f"[{step}]"
        elif step in _GENERATORS and parts and parts[-1].startswith("generators["):
            kind = step
            if step in ("matrix", "merge"):
                parts.append(step)
            else:
                break
        else:
            parts.append(step)
    return f"the {kind} generator {'.'.join(parts)}"
