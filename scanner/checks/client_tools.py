"""Client tools the repository pins, held against each hop of the cluster (rules/client-tools.yaml):
kubectl outside its skew of the API server, helm outside the minors its release supports, and a flux
CLI whose own Flux release (what `flux install` and `flux bootstrap` write) does not support the
hop. Each is a warning at the first hop where the pin leaves the window, at the line of the pin.
A CI job's pin is held against the hops only when its job reaches the cluster, or kubehop cannot
tell (ToolPin.job, sources/cluster/ci_jobs.py): a job that only renders, or talks only to a kind
cluster of its own, is bound by no skew of the cluster kubehop plans.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.cluster_config import ToolPin
from scanner.model import Finding, Manifest
from scanner.tool_rules import ClientTool, client_tools
from scanner.versions import Minor

SKEW = "client-tool/kubectl-skew"
UNSUPPORTED = "client-tool/unsupported"
UNKNOWN = "client-tool/support-unknown"
_VERSION = re.compile(r"^v?(\d+)\.(\d+)")
SCOPE = TREE


def _rules(_rulebook) -> dict[str, RuleInfo]:
    """Each rule and its severity; kubectl's skew is one policy's (a finding names its tool's own source)."""
    kubectl = client_tools().get("kubectl")
    return {
        SKEW: RuleInfo("a kubectl outside one minor of the hop's API server", "The version-skew policy supports "
                       "kubectl within one minor of kube-apiserver, older or newer: move the pin along with the "
                       "hops.", "warning", kubectl.skew_source if kubectl else None),
        UNSUPPORTED: RuleInfo("a client tool whose release does not support the hop", "Move the pin to a release "
                              "that supports the hop (helm's support policy; for flux, the Flux release the CLI "
                              "installs).", "warning"),
        UNKNOWN: RuleInfo("a client tool whose support of the hop no source states", "kubehop's data states "
                          "nothing for this release: check its release notes.", "notice"),
    }


RULES = Rules(_rules)


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    hops = _hops(context)
    if not hops:
        return
    tools, seen = client_tools(), set()
    for pin in context.tool_pins:
        tool, version = tools.get(pin.tool), _version(pin.version)
        if tool is None or version is None or (pin.job is not None and not pin.job.judged):
            continue  # a CI job that reaches no cluster kubehop plans is bound by no skew of it
        if tool.skew is not None:
            finding = _skew(pin, tool, Minor(*version), hops, context.current)
        elif tool.ranges:
            finding = _ranged(pin, tool, version, hops, context.current)
        elif tool.pairs_with:
            finding = _paired(pin, tool, hops)
        else:
            finding = None
        if finding is not None and finding not in seen:
            seen.add(finding)
            yield finding


def _hops(context: ScanContext) -> list[Minor]:
    """The minors the API server passes through: each hop after `current`, else the target alone."""
    if context.current is None:
        return [context.target]
    hops, minor = [], context.current.next()
    while minor <= context.target:
        hops.append(minor)
        minor = minor.next()
    return hops


def _version(text: str) -> tuple[int, int] | None:
    match = _VERSION.match(text.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def _finding(pin: ToolPin, rule_id: str, severity: str, message: str, fix: str, hop: Minor,
             source: str | None) -> Finding:
    """`message` says what leaves the window and where the tree pins it; `fix`, what clears it (Finding.fix)."""
    return Finding(rule_id=rule_id, severity=severity, message=f"{message} ({pin.via})", origin=pin.origin,
                   api_version="", kind="ClientTool", name=f"{pin.tool} {pin.version}", breaks_in=hop,
                   source_url=source, fix=fix)


def _skew(pin: ToolPin, tool: ClientTool, client: Minor, hops: list[Minor], current: Minor | None) -> Finding | None:
    """The first hop whose API server is more than `skew` minors from the client (older or newer)."""
    skew = tool.skew
    if current is not None and abs(client.minor - current.minor) > skew:
        # Outside the window today already: older, it left at the hop after the last one it fit.
        hop = Minor(client.major, client.minor + skew + 1) if client < current else current
        first = hops[0]
        return _finding(pin, SKEW, "warning",
                        f"{pin.tool} {pin.version} is already more than {skew} minor from the {current} API server "
                        f"(the version-skew policy)",
                        f"move it to {current} or {first} before the hop to {first}, and along with each later hop",
                        hop, tool.skew_source)
    hop = next((m for m in hops if abs(m.minor - client.minor) > skew), None)
    if hop is None:
        return None
    fits = f"{Minor(hop.major, hop.minor - 1)} or {hop}"  # in the window on both sides of the hop
    return _finding(pin, SKEW, "warning",
                    f"{pin.tool} {pin.version} is {'newer' if client > hop else 'older'} than a {hop} API server by "
                    f"more than the {skew} minor the version-skew policy supports",
                    f"move it to {fits} for the hop to {hop}, and along with each later hop", hop, tool.skew_source)


def _ranged(pin: ToolPin, tool: ClientTool, version: tuple[int, int], hops: list[Minor],
            current: Minor | None) -> Finding | None:
    stated = next((r for r in tool.ranges if r.version == version), None)
    if stated is None:
        newest = tool.ranges[-1]
        if version < tool.ranges[0].version:
            hop = hops[0]
            return _finding(pin, UNSUPPORTED, "warning",
                            f"{pin.tool} {pin.version} is older than every release whose support the data states",
                            f"move it to a release that supports {hop}{_supporting(tool, hop)}", hop,
                            tool.ranges_source)
        return _finding(pin, UNKNOWN, "notice",
                        f"{pin.tool} {pin.version}: the support policy kubehop read states ranges up to "
                        f"{pin.tool} {newest.version[0]}.{newest.version[1]} ({newest.min}-{newest.max}), none for "
                        f"this release: its support of {_span(hops)} is unknown",
                        f"check the release notes of {pin.tool} {pin.version} for its support of {_span(hops)}",
                        hops[0], tool.ranges_source)
    if current is not None and not stated.min <= current <= stated.max:
        return _finding(pin, UNSUPPORTED, "warning",
                        f"{pin.tool} {pin.version} supports Kubernetes {stated.min} to {stated.max}, not the "
                        f"{current} cluster of today",
                        f"move it to a release that supports {hops[0]}{_supporting(tool, hops[0])} before the hop",
                        current, tool.ranges_source)
    hop = next((m for m in hops if not stated.min <= m <= stated.max), None)
    if hop is None:
        return None
    return _finding(pin, UNSUPPORTED, "warning",
                    f"{pin.tool} {pin.version} supports Kubernetes {stated.min} to {stated.max}, not {hop}",
                    f"move it to a release that supports {hop}{_supporting(tool, hop)}", hop, tool.ranges_source)


def _span(hops: list[Minor]) -> str:
    return f"{hops[0]}" if len(hops) == 1 else f"{hops[0]} to {hops[-1]}"


def _supporting(tool: ClientTool, hop: Minor) -> str:
    found = [f"{r.version[0]}.{r.version[1]}" for r in tool.ranges if r.min <= hop <= r.max]
    if not found:
        return ""
    return f" ({tool.name} {found[0]})" if len(found) == 1 else f" ({tool.name} {found[0]} to {found[-1]})"


def _paired(pin: ToolPin, tool: ClientTool, hops: list[Minor]) -> Finding | None:
    """A CLI that installs its own release of a component (flux): that release's support, hop by hop."""
    from scanner.components.catalog import load_components

    component = load_components(frozenset({tool.pairs_with})).components.get(tool.pairs_with)
    release = component.release(pin.version.lstrip("v")) if component is not None else None
    if release is None:
        return _finding(pin, UNKNOWN, "notice",
                        f"{pin.tool} CLI {pin.version} installs {tool.pairs_with} {pin.version}, a release the data "
                        f"does not list: whether it supports {_span(hops)} is unknown",
                        f"check the release notes of {tool.pairs_with} {pin.version} for its support of "
                        f"{_span(hops)}", hops[0], tool.pairing_source)
    for hop in hops:
        supported = release.supports(hop)
        if supported:
            continue
        newer = next((r.version for r in component.releases if r.key > release.key and r.supports(hop)), None)
        state = "does not support" if supported is False else "does not state support for"
        said = f"{pin.tool} CLI {pin.version} installs {component.title} {release.version} " \
            f"({release.support_text}), which {state} {hop}"
        move = f"move the CLI to {newer} or later with the {component.title} it installs"
        if not newer:
            said += ", and no release the data lists states support for it"
            move = f"check the {component.title} release notes for a release that supports {hop}"
        return _finding(pin, UNSUPPORTED if supported is False else UNKNOWN,
                        "warning" if supported is False else "notice", said, move, hop, tool.pairing_source)
    return None
