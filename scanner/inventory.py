"""The API surface a tree uses: each apiVersion/kind, how often, and the minors that serve it."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from scanner.components.catalog import Catalog
from scanner.freshness import data_checked
from scanner.model import Manifest
from scanner.rulebook import ServedApis
from scanner.sources.files.walk import build_file
from scanner.versions import Minor
from scanner.report.plain import log_json, log_lines


@dataclass(frozen=True)
class ApiUse:
    api_version: str
    kind: str
    count: int
    served: str  # "since 1.19", "until 1.24", "1.26–1.31", "every known minor", "CRD" or "unknown"
    owner: str | None = None  # the component whose CRD it is, when the data knows

    @property
    def builtin(self) -> bool:
        return self.served != "CRD"


def inventory(manifests: Sequence[Manifest], served: ServedApis, catalog: Catalog) -> list[ApiUse]:
    counts = Counter((m.api_version, m.kind) for m in manifests if not build_file(m.origin))
    uses = []
    for (api_version, kind), count in sorted(counts.items()):
        owner = None
        if (api_version, kind) in served.spans:
            text = _span(*served.spans[(api_version, kind)], oldest=served.minors[0])
        elif served.is_builtin(api_version):
            text = "unknown"
        else:
            text = "CRD"
            component = catalog.crd_owner(api_version)
            owner = component.name if component else None
        uses.append(ApiUse(api_version, kind, count, text, owner))
    return uses


def _span(first: Minor, last: Minor | None, oldest: Minor) -> str:
    """The served minors, without claiming a first minor older than the data knows."""
    if first <= oldest:
        return f"until {last}" if last else "every known minor"
    return f"{first}–{last}" if last else f"since {first}"


def render_text(uses: list[ApiUse], minors: tuple) -> str:
    width = max([len(f"{u.api_version} {u.kind}") for u in uses] + [10])
    lines = [f"{'API':<{width}}  {'objects':>7}  served in"]
    for use in uses:
        served = f"CRD ({use.owner})" if use.owner else use.served
        lines.append(f"{use.api_version + ' ' + use.kind:<{width}}  {use.count:>7}  {served}")
    builtin = sum(u.builtin for u in uses)
    lines.append((f"{len(uses)} APIs: {builtin} built-in, {len(uses) - builtin} from CRDs; "
                  f"served minors known for Kubernetes {minors[0]}–{minors[-1]}" if minors else f"{len(uses)} APIs")
                 + f" (data checked {data_checked()})")
    return log_lines(lines)  # one line each: nothing from the tree breaks one (report/plain.py)


def render_json(uses: list[ApiUse]) -> str:
    return log_json([{"apiVersion": u.api_version, "kind": u.kind, "objects": u.count, "served": u.served,
                      "component": u.owner} for u in uses], ensure_ascii=True)
