"""The objects that flow through the pipeline: sources -> manifests -> checks -> findings -> reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from scanner.versions import Minor

STDIN_PATH = "<stdin>"  # the path standard input is reported under

# --fail-on: findings of this severity or above make the exit code 1 ("never": none do).
FAIL_ON_LEVELS = ("error", "warning", "never")

# Exit codes, the same for every command.
EXIT_OK = 0  # nothing blocks the target
EXIT_BLOCKED = 1  # at least one error-level finding (or blocker, or object left to a person)
EXIT_USAGE = 2  # bad command line (click's own code too)
EXIT_INPUT = 3  # some input could not be read; everything else was still scanned
EXIT_INTERNAL = 4  # kubehop failed (a bug): no report can be trusted


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a person edits the thing: a file, a 1-based line and column."""

    path: str
    line: int = 0
    column: int = 0
    # How the object reached the scan when it is not the file itself, e.g. "helm release x (chart y)".
    via: str | None = None

    def __reduce__(self):
        """Its fields as they are (a worker process sends every object's: sources/files/parallel.py):
        the state functions dataclasses writes for a frozen class with slots ask fields() each time."""
        return (Origin, (self.path, self.line, self.column, self.via))


@dataclass(slots=True, init=False)
class Manifest:
    """One Kubernetes object as read from a source.

    `node` is the composed YAML node (it knows the line of every key); `body`
    is built from it on first use only, because most checks never need it.
    Once the checks that read every object have seen it, the scan may release the
    node (`release`): a later reader gets it composed again from its file.
    """

    api_version: str
    kind: str
    name: str | None
    namespace: str | None
    origin: Origin
    _node: Any = field(repr=False)
    _body: Any = field(repr=False)
    # For an object read from a tool's output (a render, a build): its nodes' (line, column) there ->
    # (line, column) in origin.path, or (line, column, file) in the file that sets the value (a chart's
    # values.yaml) (sources/yaml/line_map.py). None: the nodes were read from that file.
    line_map: Callable[[int, int], tuple] | None = field(repr=False)
    # Composes a released node again (sources/files/retention.py); None while the node is held.
    _recompose: Callable[["Manifest"], Any] | None = field(repr=False)
    # A file a kustomization in the tree applies as a patch (sources/kustomize/patches.py): a partial
    # object, whose completeness is judged on the built object.
    patch: bool = field(repr=False)
    # Read from a chart template as text: its apiVersion and kind are known, its body is not.
    text_only: bool = field(repr=False)
    # For an object a kustomize overlay patched: where a patch set a key path of it (the line a person
    # edits for that value: sources/kustomize/overlays.py), e.g. {("spec", "chart", "spec", "version"): ...}.
    patched_at: dict = field(repr=False)
    # For an object a Flux Kustomization's post-build substitution filled in (sources/postbuild/): id(node)
    # of each filled-in scalar -> where a person edits its value (the ConfigMap entry that sets it, `via`
    # naming the `${...}` it replaced), or None (its line, a default written there). None: nothing filled.
    filled: dict | None = field(repr=False)

    def __init__(self, api_version: str, kind: str, name: str | None, namespace: str | None, origin: Origin,
                 node: Any = None, line_map: Callable[[int, int], tuple[int, int]] | None = None):
        self.api_version, self.kind, self.name, self.namespace, self.origin = api_version, kind, name, namespace, origin
        self._node, self._body, self.line_map, self._recompose = node, None, line_map, None
        self.patch = self.text_only = False
        self.patched_at = {}
        self.filled = None

    @property
    def node(self) -> Any:
        if self._node is None and self._recompose is not None:
            return self._recompose(self)
        return self._node

    def __reduce__(self):
        """A node does not cross processes (sources/files/parallel.py): the receiver composes it again. Only
        an object read from a file of its own (no line_map) is sent."""
        return (Manifest, (self.api_version, self.kind, self.name, self.namespace, self.origin))

    def release(self, recompose: Callable[["Manifest"], Any]) -> None:
        """Let go of the node and body; `recompose(self)` gives the node again when it is asked for."""
        self._node = self._body = None
        self._recompose = recompose

    def origin_at(self, node: Any) -> Origin:
        """Where a person edits `node` (a key, an item) of this object: its file, line and column."""
        filled = self.filled_at(node)
        if filled is not None:
            return filled
        line, column, path = node.start_mark.line + 1, node.start_mark.column + 1, self.origin.path
        if self.line_map is not None:
            placed = self.line_map(line, column)
            line, column = placed[0], placed[1]
            path = placed[2] if len(placed) > 2 else path  # set in another file: a chart's values.yaml
        return Origin(path, line, column, self.origin.via)

    def filled_at(self, node: Any) -> Origin | None:
        """Where the value of a node Flux's post-build substitution filled in is set, when one entry sets it."""
        return self.filled.get(id(node)) if self.filled else None

    @property
    def body(self) -> dict:
        if self._body is not None:
            return self._body
        from scanner.nodes import construct  # imports yaml: not at start-up

        body = construct(self.node)
        if self._recompose is None:  # a released object's body is not kept either
            self._body = body
        return body

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def object_ref(self) -> str:
        return object_ref(self.kind, self.namespace, self.name)


def object_ref(kind: str, namespace: str | None, name: str | None) -> str:
    """Kind namespace/name, as a person names the object."""
    name = name or "<unnamed>"
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One upgrade blocker, warning or notice: what breaks, at which object and line, at which minor, and
    its fix."""

    rule_id: str
    severity: str  # "error" (blocks the target), "warning", or "notice" (worth knowing; never fails a scan)
    message: str
    origin: Origin
    api_version: str
    kind: str
    name: str | None
    namespace: str | None = None
    breaks_in: Minor | None = None  # first minor where it stops working (None: not scheduled)
    deprecated_in: Minor | None = None
    replacement: str | None = None
    note: str | None = None
    source_url: str | None = None
    # With --from: "now" when the replacement is already served at --from, "during-hop" otherwise.
    migrate: str | None = None
    # Ordered steps that clear the finding, one line each; a step's commands follow it, indented.
    remediation: tuple[str, ...] = ()
    # A component finding's state for the minor it is about: "supported", "unsupported", "unknown"
    # (no source states it) or "unverified" (no release states support); None for other findings.
    support: str | None = None
    # What clears it, as one instruction ("use networking.k8s.io/v1"), kept out of `message`: a report
    # that shows the two apart reads it here, never from the message's wording.
    fix: str | None = None
    # The clusters of a fleet repository this finding breaks in (scanner.fleet); empty: one cluster.
    clusters: tuple[str, ...] = ()
    # In a file no build deploys (scanner.policy.not_deployed_as_notices): a notice, whatever it breaks.
    not_deployed: bool = False

    @property
    def text(self) -> str:
        """The message and its fix, as one sentence: what the reports that show them together print."""
        return f"{self.message}; {self.fix}" if self.fix else self.message

    @property
    def unscheduled(self) -> bool:
        """Tied to no Kubernetes minor: it breaks whatever the version (CRDs, cluster state)."""
        return self.breaks_in is None and self.deprecated_in is None

    @property
    def object_ref(self) -> str:
        return object_ref(self.kind, self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class DuplicateKey:
    """A key that helm's output writes twice in one object: a fact a source hands the checks
    (sources/helm/rendered_duplicates.py finds it, checks/duplicate_keys.py reports it)."""

    manifest: Manifest
    key: str  # the key written twice
    where: str  # its dotted path in the object
    kept_at: Origin  # the occurrence the API server keeps
    dropped_at: Origin
    kept: str  # the value kept, as a person reads it ('x', a list, a mapping)
    dropped: str
    same: bool  # both are the same scalar: nothing is lost


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A problem with the input itself (not with what it asks of Kubernetes)."""

    path: str
    message: str
    line: int | None = None
    # "error": some input could not be read (exit code 3); "warning": worth a look, blocks nothing
    # (e.g. an unused suppression); "notice": informational.
    level: str = "error"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"
