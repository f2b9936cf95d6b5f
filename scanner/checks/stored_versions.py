"""The storedVersions trap: a new CRD that drops a version the cluster still lists as stored.

The API server refuses any CRD whose spec.versions misses an entry of its
status.storedVersions, so the chart upgrade or sync that carries the CRD fails. The
finding gives the way out in order, with the cluster's real names.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from scanner import kubectl
from scanner.checks.context import TREE, ScanContext
from scanner.checks.findings import crd_lifecycle_rules, object_finding
from scanner.cluster_state import ClusterState
from scanner.crds import Crd
from scanner.model import Finding, Manifest

SCOPE = TREE
DROPPED = "crd/stored-version-dropped"
RULES = crd_lifecycle_rules({DROPPED: ("error", "a new CRD drops a version the cluster still stores")})

# Past this many objects, one loop over every namespace replaces the per-object commands.
MAX_LISTED_OBJECTS = 20


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    if context.cluster is None:
        return
    for crd in context.crds:
        live = context.cluster.crds.named(crd.name)
        dropped = [v for v in live.stored_versions if crd.version(v) is None] if live else []
        if dropped:
            yield _finding(crd, live, dropped, context.cluster)


def _finding(crd: Crd, live: Crd, dropped: list[str], cluster: ClusterState) -> Finding:
    message = (f"the cluster stores {crd.kind} objects at {', '.join(dropped)} (status.storedVersions: "
               f"[{', '.join(live.stored_versions)}]) and this CRD drops it from spec.versions: the API server "
               f"refuses any update to this CRD (kubectl apply, a GitOps sync, a chart that renders its CRDs) "
               f"while it is listed")
    return object_finding(crd.manifest, DROPPED, "error", message, crd.versions_origin,
                          remediation=_remediation(crd, live, dropped, cluster.objects_of(crd)))


def _remediation(crd: Crd, live: Crd, dropped: list[str], objects: list[Manifest]) -> tuple[str, ...]:
    storage = crd.storage_version
    if storage is None:
        return ()
    gone = ", ".join(dropped)
    steps: list[tuple[str, list[str]]] = []
    if live.storage_version != storage:
        conversion = ("its conversion webhook converts them" if crd.conversion == "Webhook" else
                      f"without a conversion webhook only apiVersion changes, and fields {storage} "
                      f"does not define are pruned")
        steps.append((f"Apply a CRD that keeps {gone} in spec.versions (served: true, storage: false) "
                      f"and stores {storage}: this CRD with the cluster's {gone} added back; {conversion}.", []))
    listed = objects and len(objects) <= MAX_LISTED_OBJECTS
    steps.append((f"Rewrite every {crd.kind} at {storage}, in every namespace (an empty merge patch is "
                  f"a write, and a write stores at the storage version):",
                  [kubectl.rewrite(crd, o) for o in objects] if listed else [kubectl.rewrite_all(crd)]))
    steps.append((f"Only once every rewrite succeeded, record that nothing is stored at {gone}:",
                  [kubectl.set_stored_versions(crd, [storage])]))
    steps.append(("Apply this CRD (the chart upgrade or sync that carries it).", []))
    namespaces = sorted({o.namespace for o in objects if o.namespace})
    alternative = (f"Or, when the objects are recreated from Git: delete them, then steps "
                   f"{len(steps) - 1} and {len(steps)}:", kubectl.delete_all(crd, namespaces))
    return kubectl.numbered(steps) + kubectl.numbered([alternative], start=None)
