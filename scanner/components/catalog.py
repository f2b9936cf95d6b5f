"""What kubehop knows about third-party components: compat-matrix/, rules/crds/, rules/hop-notes/.

Read once and validated by their schemas (`scanner.data`). Every fact here comes from a data
file with its source; unknowns stay None and are reported as unknown, never guessed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from scanner import data
from scanner.components.ranges import SUPPORTED, UNKNOWN, UNSUPPORTED, PatchRange, Range, Requirement  # noqa: F401
from scanner.semver import admits_line, parse_pin, parse_version
from scanner.minor_releases import newest_out_on
from scanner.versions import Minor, parse_minor
from scanner.components.release import Release, placeholder, release_key  # noqa: F401 (the catalog's names)


@dataclass(frozen=True)
class Chart:
    """A Helm chart that installs a component, and the repositories it is published in."""

    name: str
    repositories: tuple[str, ...] = ()


@dataclass(frozen=True)
class Generated:
    """A file of the component's manifests its own tool writes (a marker says so): regenerated, never edited."""

    marker: str
    command: str  # with {version}, {path} and {components} to fill in
    components_header: str | None
    version_prefix: str
    source: str


@dataclass(frozen=True)
class Component:
    """A component of compat-matrix/: how the tree shows it (detection) and its releases."""

    name: str
    title: str
    one_minor_at_a_time: bool | None  # None: unknown
    releases: tuple[Release, ...]  # oldest first
    charts: tuple[Chart, ...] = ()
    # None: chart version == app version; else (chart line, app minor) pairs.
    chart_lines: tuple[tuple[str, str], ...] | None = None
    # Chart lines that state a range of their own (Chart.yaml kubeVersion), which replaces the app
    # release's for those chart versions: (chart line, range, source).
    chart_ranges: tuple[tuple[str, Range, str], ...] = ()
    # (chart version, app version) of each chart version the data lists on its lines (app_patches):
    # the app patch a chart pin installs (components.chart_patches).
    chart_patches: tuple[tuple[str, str], ...] = ()
    images: tuple[str, ...] = ()
    crd_groups: tuple[str, ...] = ()
    kustomize_urls: tuple[str, ...] = ()
    # Its installer stamps app.kubernetes.io/version with its own release (detect.release_label_source):
    # such a label is a pin even for a release the data does not list.
    release_label: bool = False
    # Its installer once stamped that label without app.kubernetes.io/part-of (detect.crd_release_label_source):
    # a CRD of a group it owns so labelled pins it (Flux before v0.12).
    crd_release_label: bool = False
    # The releases listed are those of this app, which the chart ships (kube-prometheus-stack:
    # prometheus-operator): a message names the chart version and the app's release apart.
    release_title: str | None = None
    chart_track: bool = False  # a chart's own versions, ranges read from their kubeVersion (components.charts)
    # Flux sources (OCIRepository, GitRepository) serving the component's own release manifests: the
    # pin the running system reads (Flux reconciling itself); their URLs hold one of these.
    manifest_sources: tuple[str, ...] = ()
    generated: Generated | None = None
    # Another project's objects and charts that install this component at the release a field names:
    # (group, kind, path) and (chart, values path, the chart's default) (components/installed_by.py).
    version_fields: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    chart_values: tuple[tuple[str, tuple[str, ...], str], ...] = ()
    # Deployed by the tree but in no data file (components.unlisted): no release, no range, every hop unknown.
    no_data: bool = False

    def release(self, version: str) -> Release | None:
        try:
            key = release_key(version)
        except data.DataError:
            return None
        return next((r for r in self.releases if r.key == key), None)

    def index(self, release: Release) -> int:
        return self.releases.index(release)

    def releases_after(self, release: Release) -> tuple[Release, ...]:
        """The listed releases newer than `release` (which may be one the data does not list), each
        patch that restates a range as a release of its own: 1.7.3 comes after 1.7, before 1.8."""
        after = release.order
        return tuple(e for e in self._effective if e.order > after)

    @functools.cached_property
    def _effective(self) -> tuple[Release, ...]:
        """Every release and each patch that restates its range, as listed: made once."""
        return tuple(e for r in self.releases for e in r.effective())

    def unlisted(self, version: str) -> Release | None:
        """A release the data does not list, for a version the tree pins: its range is unknown. A
        placeholder (0.0.0, 0.0.1: what a chart or template carries before anyone versions it) is no
        release at all."""
        parsed = parse_version(version)
        if parsed is None or parsed.precision < 2 or placeholder(version):
            return None
        major, minor, _ = parsed.floor
        return Release(f"{major}.{minor}", None, None, None, "", listed=False)

    def releases_admitted(self, pin: str, chart_version: bool) -> tuple[Release, ...] | None:
        """The known releases a version pin can install, oldest first; None if the pin is unreadable.

        `chart_version`: the pin is a Helm chart version, mapped through `chart_lines` when the
        chart has its own numbering.
        """
        intervals = parse_pin(pin)
        if intervals is None:
            return None
        if chart_version and self.chart_lines is not None:
            from scanner.components.chart_patches import exact_version  # a chart of its own numbering's pin

            apps = {release_key(app) for line, app in self.chart_lines if admits_line(intervals, line)}
            exact = exact_version(pin)
            shipped = next((app for chart, app in self.chart_patches if exact == chart), None) if exact else None
            if shipped is not None:  # a chart line that ships two minors (Argo CD 9.5): this version's
                apps = {release_key(shipped)}
            return tuple(r for r in self.releases if r.key in apps)
        return tuple(r for r in self.releases if admits_line(intervals, r.version))

    def chart_range(self, chart_version: str) -> tuple[Range, str] | None:
        """The range a chart version's own line states, with its source; None when the line states none
        (the app release's range then applies)."""
        intervals = parse_pin(chart_version)
        if intervals is None:
            return None
        found = [(r, s) for line, r, s in self.chart_ranges if admits_line(intervals, line)]
        return found[-1] if found else None

    def named(self, version: str, chart: str | None = None) -> str:
        """The component at a release, as a message names it: "Longhorn 1.7"; for a chart whose
        releases are an app's, "kube-prometheus-stack chart 56.2.0 (prometheus-operator 0.71)"
        (`chart`: the version pinned; else the chart lines that ship the release)."""
        if self.release_title is None:
            return f"{self.title} {version}"
        chart = chart or self.chart_lines_of(version)
        return f"{self.title}{' chart ' + chart if chart else ''} ({self.release_title} {version})"

    def short(self, version: str) -> str:
        """A release a message names after the component: "0.78 (chart 66)" for a chart whose releases
        are an app's, else the version."""
        lines = self.chart_lines_of(version) if self.release_title is not None else None
        return f"{version} (chart {lines})" if lines else version

    def chart_lines_of(self, version: str) -> str | None:
        """The chart lines that ship an app release, "66" or "45.26–45.31"; None when none is listed."""
        lines = [line for line, app in self.chart_lines or () if app == version]
        if not lines:
            return None
        return lines[0] if len(lines) == 1 else f"{lines[0]}–{lines[-1]}"

    def has_chart(self, name: str) -> bool:
        return any(chart.name == name for chart in self.charts)


@dataclass(frozen=True)
class CrdRule:
    """An API of a component's CRD that a release deprecates or removes (rules/crds)."""

    component: str
    id: str
    api_version: str
    kind: str
    deprecated_in: str | None
    removed_in: str | None
    replacement: str | None
    note: str | None
    source: str
    replacement_kind: str | None = None  # only when the successor is another kind

    @property
    def use(self) -> str | None:
        """What to use instead: `use cilium.io/v2 CiliumBGPClusterConfig` (the kind only when it changes)."""
        if not self.replacement:
            return None
        kind = self.replacement_kind if self.replacement_kind and self.replacement_kind != self.kind else None
        return f"use {self.replacement}" + (f" {kind}" if kind else "")


@dataclass(frozen=True)
class HopNote:
    """What a distribution says of a hop to one minor (rules/hop-notes)."""

    distro: str
    minor: Minor
    title: str
    detail: str
    source: str
    projected: bool = False  # from a source before the minor's release, not yet confirmed (status: projected)


@dataclass(frozen=True)
class Catalog:
    """Every component, CRD rule and hop note of the data."""

    components: dict[str, Component]
    crd_rules: tuple[CrdRule, ...] = ()
    hop_notes: dict[str, tuple[HopNote, ...]] = field(default_factory=dict)

    def rules_for(self, component: str) -> list[CrdRule]:
        return [r for r in self.crd_rules if r.component == component]

    def crd_owner(self, api_version: str) -> Component | None:
        group = api_version.rpartition("/")[0]
        return next((c for c in self.components.values() if group in c.crd_groups), None)

    @property
    def distros(self) -> tuple[str, ...]:
        return tuple(sorted(self.hop_notes))

    def notes_for(self, distro: str, minor: Minor) -> list[HopNote]:
        return [n for n in self.hop_notes.get(distro, ()) if n.minor == minor]


def _minor_or_none(value) -> Minor | None:
    return parse_minor(value) if value else None


def component_from_data(document: dict) -> Component:
    detect = document.get("detect") or {}
    mapping = detect.get("chart_versions", "same")
    # An open-ended statement speaks for the minors out on the day its sources were read, no later ones.
    read_on = document.get("sources_as_of") or document.get("data_checked")
    through = newest_out_on(read_on) if read_on else None
    one_minor = document.get("one_minor_at_a_time")
    component = Component(
        name=document["name"],
        title=document.get("title", document["name"]),
        one_minor_at_a_time=one_minor if isinstance(one_minor, bool) else None,
        releases=(),
        charts=tuple(Chart(c["name"], tuple(c.get("repositories", ()))) for c in detect.get("charts", ())),
        chart_lines=None if mapping == "same" else tuple((str(m["chart"]), str(m["app"])) for m in mapping),
        chart_ranges=() if mapping == "same" else tuple(
            (str(m["chart"]), _range(m["kubernetes"], through), m["source"]) for m in mapping if "kubernetes" in m),
        chart_patches=() if mapping == "same" else tuple(
            (str(chart), str(app)) for m in mapping for chart, app in (m.get("app_patches") or {}).items()),
        images=tuple(detect.get("images", ())),
        crd_groups=tuple(detect.get("crd_groups", ())),
        kustomize_urls=tuple(detect.get("kustomize_urls", ())),
        release_label="release_label_source" in detect,
        crd_release_label="crd_release_label_source" in detect,
        release_title=document.get("release_title"),
        manifest_sources=tuple(detect.get("manifest_sources", ())),
        generated=_generated(detect.get("generated")),
        version_fields=tuple((f["group"], f["kind"], tuple(f["path"].split("."))) for f in detect.get("version_fields", ())),
        chart_values=tuple((v["chart"], tuple(v["path"].split(".")), v["default"]) for v in detect.get("chart_values", ())),
    )
    del component.__dict__["releases"]  # read when first asked for (_ReadWhenAsked)
    component.__dict__["_release_entries"] = (document["releases"], through)
    return component


class _ReadWhenAsked:
    """A data file's releases, read the first time the component's are asked for: every scan reads each
    file's detection (images, charts, labels), the releases only of the components its tree pins, and
    reading all 2,000 was a tenth of a one-file run. A component built otherwise holds its releases
    from the start: this class attribute is found only when the instance has none (component_from_data)."""

    def __get__(self, component: Component | None, owner: type | None = None):
        if component is None:
            return self
        entries, through = component.__dict__["_release_entries"]
        if isinstance(entries, data.Later):
            entries = entries.value()
        releases = tuple(sorted((_release(entry, through) for entry in entries), key=lambda r: r.key))
        component.__dict__["releases"] = releases  # found first from now on
        component.__dict__.pop("_release_entries", None)
        return releases


Component.releases = _ReadWhenAsked()  # after @dataclass, so that it is no default of the field


def _generated(entry: dict | None) -> Generated | None:
    if not entry:
        return None
    return Generated(entry["marker"], entry["command"], entry.get("components_header"),
                     entry.get("version_prefix", ""), entry["source"])


def _range(support: dict, through: Minor | None = None) -> Range:
    open_ended = support.get("open_ended", False)
    return Range(_minor_or_none(support.get("min")), _minor_or_none(support.get("max")), open_ended,
                 _through(support, through))


def _through(support: dict, checked: Minor | None) -> Minor | None:
    """How far an open-ended range speaks: the minors out on the day its source was read (`as_of`, else
    the file's data_checked)."""
    if not support.get("open_ended", False):
        return None
    return newest_out_on(support["as_of"]) if support.get("as_of") else checked


def _release(entry: dict, through: Minor | None = None) -> Release:
    support = entry.get("kubernetes") or {}
    return Release(
        version=str(entry["version"]),
        released=entry.get("released"),
        min=_minor_or_none(support.get("min")),
        max=_minor_or_none(support.get("max")),
        source=entry["source"],
        open_ended=support.get("open_ended", False),
        through=_through(support, through),
        source_kind=entry.get("source_kind", "primary"),
        requires=tuple(Requirement(r["component"], str(r["version"]), (r.get("when") or {}).get("values"),
                                   r.get("source")) for r in entry.get("requires", ())),
        note=entry.get("note"),
        patches=tuple(PatchRange(p["from"], _range(p["kubernetes"], through), p["source"], p.get("note"))
                      for p in entry.get("patches", ())),
    )


def crd_rules_from_data(document: dict) -> list[CrdRule]:
    return [CrdRule(
        component=document["component"],
        id=rule["id"],
        api_version=rule["apiVersion"],
        kind=rule["kind"],
        deprecated_in=_text_or_none(rule.get("deprecated_in")),
        removed_in=_text_or_none(rule.get("removed_in")),
        replacement=rule.get("replacement"),
        note=rule.get("note"),
        source=rule["source"],
        replacement_kind=rule.get("replacement_kind"),
    ) for rule in document["rules"]]


def hop_notes_from_data(document: dict) -> tuple[HopNote, ...]:
    return tuple(HopNote(document["distro"], parse_minor(n["minor"]), n["title"], n.get("detail", ""), n["source"],
                         n.get("status") == "projected") for n in document["notes"])


def _text_or_none(value) -> str | None:
    return None if value is None else str(value)


def catalog_from_documents(components: list[dict], crd_rules: list[dict], hop_notes: list[dict]) -> Catalog:
    return Catalog(
        components={c.name: c for c in map(component_from_data, components)},
        crd_rules=tuple(rule for document in crd_rules for rule in crd_rules_from_data(document)),
        hop_notes={document["distro"]: hop_notes_from_data(document) for document in hop_notes},
    )


def _folder(relative: str, root: Path | None = None, later: tuple[str, ...] = ()) -> list[dict]:
    return [document for _, document in data.load_folder(relative, root, later=later)]


def load_catalog_from(root: Path | None = None) -> Catalog:
    # The releases come unread (data.Later): a scan reads those of the components its tree pins only.
    return catalog_from_documents(_folder("compat-matrix", root, later=("releases",)), _folder("rules/crds", root),
                                  _folder("rules/hop-notes", root))


@functools.cache
def load_catalog() -> Catalog:
    return load_catalog_from()


def load_components(names: frozenset[str]) -> Catalog:
    """A catalog of a few components only (and every CRD rule): what a scan's check needs."""
    found = [data.load(f"compat-matrix/{name}.yaml") for name in sorted(names)
             if (data.data_root() / "compat-matrix" / f"{name}.yaml").is_file()]
    return Catalog({c.name: c for c in map(component_from_data, found)}, load_crd_rules())


@functools.cache
def load_crd_rules() -> tuple[CrdRule, ...]:
    """Only the CRD rules: a scan reads the whole catalog only when the tree uses one of their APIs."""
    return tuple(rule for document in _folder("rules/crds") for rule in crd_rules_from_data(document))

