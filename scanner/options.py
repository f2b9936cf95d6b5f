"""What a scan can be asked beyond paths and minors: the options every source and check reads.

Its own module so that the sources, the component readers and the scan can all name it without
importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from scanner.model import Diagnostic
from scanner.exclusions import Exclusions


@dataclass(frozen=True)
class ScanOptions:
    """Everything a scan can be asked beyond paths and minors; sources and checks read what they need."""

    allow_network: bool = False  # remote Helm charts and kustomize bases may be downloaded
    values_files: tuple[str, ...] = ()  # --values: applied to every chart rendered, after its values.yaml
    helm_releases: tuple[str, ...] = ()  # --helm-releases: dumps of Helm's release Secrets
    render: bool = True  # False (--no-render): charts are read as text, kustomizations not built
    all_templates: bool = False  # templates a chart's values switch off are read as text too (latent)
    fail_on: str = "error"  # one of model.FAIL_ON_LEVELS
    exclude: tuple[Exclusions, ...] = ()
    ignore: tuple[str, ...] = ()  # rule ids (globs) whose findings are dropped
    severity: tuple[tuple[str, str], ...] = ()  # (rule id glob, severity); the last match wins
    rule_folders: tuple[Path, ...] = ()  # a user's extra rules, laid out like rules/
    baseline: str | None = None  # findings recorded there do not count
    write_baseline: bool = False  # record today's findings in `baseline` first
    # Files or folders dumped with kubectl (--cluster-state): CRDs, custom resources, nodes, version.
    cluster_state: tuple[str, ...] = ()
    unknown: str = "warn"  # --unknown: what a fact nobody states counts as (warn, block, ignore)
    # Every kustomization is built with no load restrictor (the configuration's kustomize_load_restrictor).
    kustomize_unrestricted: bool = False
    # What the configuration found in the tree names outside the repository, not read (scanner.config).
    config_problems: tuple[Diagnostic, ...] = ()
    # Where the minors came from, which every report says (a pull request may change the configuration):
    # "flag", "configuration" or "default" (the target's); "flag" or "configuration" (from's, when given).
    # `configuration`: the file the configuration was read from, if any.
    clusters: tuple = ()  # `clusters:` of the configuration (scanner.clusters.Cluster)
    rollout: tuple[str, ...] = ()  # `rollout:` of the configuration: the clusters' order, by name
    # Folders the repository spans beyond the paths read: a fleet's cluster reads part of its repository,
    # whose top still bounds what its files may name (scanner.containment).
    repository_roots: tuple[str, ...] = ()
    # The files no root of the repository reaches, as the whole repository's reading found them (real
    # path, why): a fleet's cluster reads part of it, and takes these (scanner.sources.reach.unreached).
    # None: the scan finds them itself.
    not_deployed: tuple[tuple[str, str], ...] | None = None
    # Real paths of the files the user named (not a folder's): never read as not deployed.
    named_files: tuple[str, ...] = ()
    target_source: str = "flag"
    from_source: str | None = None
    configuration: str | None = None
