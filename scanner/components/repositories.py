"""Which chart a chart pin installs: the name and the repository it comes from.

A chart name is no identity: anyone can publish a chart called `ingress-nginx` (a fork, a wrapper of
one's own), and it then is not the component compat-matrix/ knows by that name. So a chart from a
Helm repository (https://, oci://) is a component's only when its data lists that repository, or the
repository is a mirror that re-hosts projects' charts unchanged (rules/helm.yaml `chart_mirrors`).
A Helm chart OCI proxy (container-registry/helm-charts-oci-proxy, home-operations/ocharted) serves a
Helm repository's charts at `oci://<proxy>/<repository host>/<path>/<chart>`: that is the repository.
A chart whose repository kubehop cannot read (a HelmRepository it does not see, a `${VAR}` Flux
substitutes, a chart in a Git repository) is matched by its name alone, as before.
"""

from __future__ import annotations

import functools

from scanner import data

_SCHEMES = ("oci://", "https://", "http://")


def normalized(url: str) -> str:
    """A repository URL as compared: scheme, case, trailing slashes dropped (Argo CD writes an OCI
    registry without `oci://`; `https://charts.jetstack.io/` is `https://charts.jetstack.io`)."""
    url = url.strip().lower()
    for scheme in _SCHEMES:
        if url.startswith(scheme):
            url = url[len(scheme):]
            break
    return url.rstrip("/")


_NOT_AN_ADDRESS = ("@", "alias:", "tree:", "file://")  # helm's repository aliases, the tree's own charts


def readable(repository: str | None) -> bool:
    """Whether a pin's repository is an address kubehop can compare: not missing, not substituted
    later, not a name of helm's own repositories.yaml (`@bitnami`, `alias:bitnami`)."""
    return bool(repository) and not repository.strip().startswith(_NOT_AN_ADDRESS) \
        and not any(mark in repository for mark in ("${", "{{", "$("))


@functools.lru_cache(maxsize=1)
def _mirrors() -> tuple[str, ...]:
    return tuple(normalized(entry["repository"]) for entry in data.load("rules/helm.yaml").get("chart_mirrors", ()))


def mirror(repository: str) -> bool:
    """A repository at or under a mirror of other projects' charts."""
    url = normalized(repository)
    return any(url == m or url.startswith(m + "/") for m in _mirrors())


def lists(repositories: tuple[str, ...], repository: str, chart: str) -> bool:
    """Whether a chart's repositories in the data name this one: as a Helm repository, or as the OCI
    artifact of the chart itself (a Flux OCIRepository's URL ends in the chart's name)."""
    url = normalized(repository)
    names = {url}
    proxied = url.partition("/")[2]
    if "." in proxied.partition("/")[0]:  # a host after the registry's: a proxy of that repository
        names.add(proxied)
    names |= {f"{name}/{chart.lower()}" for name in names}
    return any(normalized(r) in names for r in repositories)
