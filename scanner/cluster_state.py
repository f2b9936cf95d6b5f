"""What a cluster holds today, read offline from files dumped with kubectl.

`--cluster-state PATH` takes files or folders of:
  kubectl get crd -o yaml                 CRDs with status.storedVersions
  kubectl get <resource> -A -o yaml       custom resources, with metadata.managedFields
  kubectl get nodes -o yaml               nodes with status.nodeInfo.kubeletVersion
  kubectl version [-o json]               the API server's version
  kubectl get --raw /metrics              deprecated APIs something still requests (scanner.client_calls)
  an audit log (JSON lines)               the same, with the clients that call them
A file that is none of these, or holds objects without the fields only a live cluster
fills in, is a Diagnostic: the check it feeds would otherwise be silently wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from yaml.nodes import MappingNode, ScalarNode, SequenceNode

from scanner.crds import Crd, CrdIndex, as_dict, is_crd, parse_crd
from scanner.guard import unexpected
from scanner.model import Diagnostic, Manifest, Origin, object_ref
from scanner.paths import repo_path
from scanner.sources.files.walk import ManifestFile, read_file, walk
from scanner.nodes import key_node, mapping_get, scalar
from scanner.sources.yaml.yamldoc import DocumentProblem, TemplateSyntax, load_data, read_text
from scanner.versions import Minor, parse_minor
from scanner.words import count

if TYPE_CHECKING:
    from scanner.client_calls import ApiCall


# What kubectl version prints, as JSON/YAML keys or as plain text.
_VERSION_KEYS = ("clientVersion", "serverVersion", "Client Version", "Server Version")


@dataclass(frozen=True)
class ClusterNode:
    """A Node of a cluster dump: its kubelet's version and labels."""

    name: str
    kubelet: Minor
    kubelet_version: str  # as the node reports it, e.g. v1.33.4+k3s1
    labels: dict[str, str]
    origin: Origin


@dataclass
class ClusterState:
    """What a cluster dump (--cluster-state, or one met in the tree) says the cluster holds."""

    crds: CrdIndex = field(default_factory=CrdIndex)
    objects: list[Manifest] = field(default_factory=list)  # everything that is neither a CRD nor a Node
    nodes: list[ClusterNode] = field(default_factory=list)
    server: Minor | None = None  # the API server's minor (kubectl version)
    server_version: str | None = None
    # Deprecated APIs something still calls: a metrics dump, an audit log (scanner.client_calls).
    api_calls: list[ApiCall] = field(default_factory=list)

    def objects_of(self, crd: Crd) -> list[Manifest]:
        """The dumped objects of a CRD's group and kind, at any version."""
        return [m for m in self.objects if m.group == crd.group and m.kind == crd.kind]


# Fields only an API server fills in: an object holding one was read from a cluster.
_SERVER_SIDE = ("uid", "resourceVersion", "managedFields")


def server_side_state(manifest: Manifest) -> str | None:
    """The field that marks an object as read from a live cluster (a kubectl dump), or None."""
    metadata = mapping_get(manifest.node, "metadata")
    if isinstance(metadata, MappingNode):  # each key's last value, as mapping_get reads it: one pass
        found = {key.value: value for key, value in metadata.value
                 if key.__class__ is ScalarNode and key.value in _SERVER_SIDE}
        for key in _SERVER_SIDE if found else ():
            value = found.get(key)
            if scalar(value) or isinstance(value, SequenceNode) and value.value:
                return f"metadata.{key}"
    if not is_crd(manifest):
        return None
    stored = mapping_get(mapping_get(manifest.node, "status"), "storedVersions")
    if isinstance(stored, SequenceNode) and stored.value:
        return "status.storedVersions"
    return None


def split_live(manifests: list[Manifest]) -> tuple[list[Manifest], list[Manifest], list[str]]:
    """(desired state, objects read from a cluster, a notice): a dump met in the scanned tree is what
    the cluster holds, never what the tree applies (its CRD is not the CRD the tree brings)."""
    desired, live = [], []
    for manifest in manifests:
        (live if server_side_state(manifest) else desired).append(manifest)
    if not live:
        return manifests, [], []
    return desired, live, [live_notice(live)]


def live_notice(live: list[Manifest]) -> str:
    first = live[0]
    return (f"{count(len(live), 'object')} in the scanned tree carry server-side state (metadata.uid, "
            f"resourceVersion, managedFields or a CRD's status.storedVersions; first: {repo_path(first.origin.path)}: "
            f"{server_side_state(first)}): read as cluster state (a kubectl dump), not as manifests the tree applies")


def load_cluster_state(paths: list[str], live: list[Manifest] = ()) -> tuple[ClusterState, list[Diagnostic]]:
    """The dumps under `paths`, and `live`: objects read from a cluster met in the scanned tree (filed
    where they belong; one that is no use as cluster state is left out silently: it was not given as a dump)."""
    from scanner.client_calls import text_dumps  # here: a scan without dumps reads no API calls

    state = ClusterState()
    diagnostics: list[Diagnostic] = []
    crds: list[Crd] = []
    for manifest in live:
        _classify(manifest, state, crds)
    for item in walk(paths):
        if isinstance(item, Diagnostic):
            diagnostics.append(item)
            continue
        if not isinstance(item, ManifestFile):
            continue  # a chart or kustomization folder: a dump is its files, which are listed too
        text, problem = read_file(item.path)
        if problem is not None:
            diagnostics.append(problem)
            continue
        try:
            diagnostics.extend(_read_dump(item.path, text, state, crds))
        except Exception as err:  # noqa: BLE001 - the last line of defence (scanner.guard)
            diagnostics.append(unexpected(item.path, err))
    for path in text_dumps(paths):
        text, problem = read_file(path)
        diagnostics.extend([problem] if problem is not None else _read_dump(path, text, state, crds))
    state.crds = CrdIndex(crds)
    if state.nodes and state.server is None and paths:
        diagnostics.append(Diagnostic(
            paths[0], "nodes were dumped but not the API server's version (kubectl version -o json): "
                      "node skew is checked from --from, if given", level="notice"))
    return state, diagnostics


def _read_dump(path: str, text: str, state: ClusterState, crds: list[Crd]) -> list[Diagnostic]:
    from scanner.client_calls import is_audit_log, is_metrics, read_audit_log, read_metrics

    for recognise, read in ((is_audit_log, read_audit_log), (is_metrics, read_metrics)):
        if recognise(text):
            calls, problems = read(path, text)
            state.api_calls.extend(calls)
            return problems
    if "apiVersion" not in text and any(key in text for key in _VERSION_KEYS):
        return _read_version(path, text, state)
    try:
        manifests, diagnostics = read_text(text, path)
    except DocumentProblem as problem:
        return [Diagnostic(path, str(problem), problem.line)]
    except TemplateSyntax:
        return [Diagnostic(path, "holds template syntax ({{ }}): not a kubectl dump")]
    if not manifests and not any(d.level == "error" for d in diagnostics):
        diagnostics.append(Diagnostic(path, "no Kubernetes objects: not a kubectl get -o yaml/json dump"))
    for manifest in manifests:
        problem = _classify(manifest, state, crds)
        if problem:
            diagnostics.append(Diagnostic(path, problem, manifest.origin.line))
    return diagnostics


def _classify(manifest: Manifest, state: ClusterState, crds: list[Crd]) -> str | None:
    """File the object where it belongs; the reason it cannot be trusted as cluster state, if any."""
    if is_crd(manifest):
        crd = parse_crd(manifest)
        if crd is None:
            return f"{_ref(manifest)}: no spec.group, names.kind or names.plural"
        if not crd.stored_versions:
            return (f"CustomResourceDefinition {crd.name} has no status.storedVersions: a manifest, "
                    f"not the output of kubectl get crd -o yaml")
        crds.append(crd)
        return None
    if manifest.kind == "Node" and manifest.api_version == "v1":
        node = _node(manifest)
        if node is None:
            return (f"{_ref(manifest)} has no valid status.nodeInfo.kubeletVersion: "
                    f"not the output of kubectl get nodes -o yaml")
        state.nodes.append(node)
        return None
    if mapping_get(mapping_get(manifest.node, "metadata"), "uid") is None:
        return (f"{_ref(manifest)} has no metadata.uid: a manifest, "
                f"not an object read from a cluster (kubectl get -o yaml)")
    state.objects.append(manifest)
    return None


def _ref(manifest: Manifest) -> str:
    return object_ref(manifest.kind, manifest.namespace, manifest.name)


def _node(manifest: Manifest) -> ClusterNode | None:
    body = manifest.body
    info = as_dict(as_dict(body.get("status")).get("nodeInfo"))
    version = info.get("kubeletVersion")
    try:
        minor = parse_minor(version)
    except ValueError:
        return None
    labels = as_dict(as_dict(body.get("metadata")).get("labels"))
    name_key = key_node(mapping_get(manifest.node, "metadata"), "name")
    origin = manifest.origin
    if name_key is not None:
        origin = Origin(origin.path, name_key.start_mark.line + 1, name_key.start_mark.column + 1)
    return ClusterNode(manifest.name or "<unnamed>", minor, str(version),
                       {str(k): str(v) for k, v in labels.items()}, origin)


def _read_version(path: str, text: str, state: ClusterState) -> list[Diagnostic]:
    """kubectl version -o json, -o yaml or plain (also YAML): only the server's version matters."""
    try:
        document = load_data(text, path)
    except DocumentProblem as problem:
        return [Diagnostic(path, f"kubectl version output that does not parse: {problem}", problem.line)]
    document = as_dict(document)
    version = as_dict(document.get("serverVersion")).get("gitVersion") or document.get("Server Version")
    try:
        state.server = parse_minor(version)
    except ValueError:
        return [Diagnostic(path, "kubectl version output without serverVersion.gitVersion: "
                                 "was kubectl connected to the cluster?")]
    state.server_version = str(version)
    return []
