"""The compatibility data (compat-matrix/, rules/crds/, rules/hop-notes/) is valid and coherent.

Every file obeys its schema; every range has a source; versions are ordered and unique; what one
file names (a required component, the owner of a CRD rule) exists in another. The last tests tie
the data to the hand-written plan of seed 002 (§4.1): the facts it states that the sources confirm,
and those where the sources say otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from scanner import data
from tests.conftest import REPO, shared_or_skip

FOLDERS = ("compat-matrix", "rules/crds", "rules/hop-notes")
SEED_002 = "seeds/002_99dde0b498d19575.txt"


def _files(folder: str) -> list[str]:
    return sorted(f"{folder}/{p.name}" for p in (REPO / folder).glob("*.yaml"))


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _components() -> dict[str, dict]:
    return {doc["name"]: doc for _, doc in data.load_folder("compat-matrix")}


def _crd_rules() -> list[tuple[str, dict]]:
    return [(doc["component"], rule) for _, doc in data.load_folder("rules/crds") for rule in doc["rules"]]


COMPONENTS = _components()


def _release(component: str, version: str) -> dict:
    return next(r for r in COMPONENTS[component]["releases"] if r["version"] == version)


def _app_for_chart(component: str, chart_version: str) -> set[str]:
    """App minors of the chart lines a chart version belongs to (a line is a major or major.minor prefix)."""
    parts = chart_version.split(".")
    return {entry["app"] for entry in COMPONENTS[component]["detect"]["chart_versions"]
            if entry["chart"].split(".") == parts[:len(entry["chart"].split("."))]}


@pytest.mark.parametrize("relative", [f for folder in FOLDERS for f in _files(folder)])
def test_every_data_file_obeys_its_schema(relative):
    data.load(relative)


def test_the_schemas_reject_a_range_without_source():
    component = {"name": "x", "title": "X", "data_checked": "2026-12-01", "one_minor_at_a_time": "unknown", "detect": {},
                 "releases": [{"version": "1.0", "released": None, "kubernetes": {"min": None, "max": None},
                               "source_kind": "primary"}]}
    with pytest.raises(data.DataError, match="source"):
        data.validate(component, data.schema_for("compat-matrix/x.yaml"), "x.yaml")


def test_an_open_ended_range_has_a_minimum_and_no_maximum():
    def component(kubernetes: dict) -> dict:
        return {"name": "x", "title": "X", "data_checked": "2026-12-01", "one_minor_at_a_time": "unknown",
                "detect": {},
                "releases": [{"version": "1.0", "released": None, "kubernetes": kubernetes,
                              "source": "https://example.org/x", "source_kind": "primary"}]}
    schema = data.schema_for("compat-matrix/x.yaml")
    data.validate(component({"min": "1.31", "max": None, "open_ended": True}), schema, "x.yaml")
    for wrong in ({"min": "1.31", "max": "1.34", "open_ended": True}, {"min": None, "max": None, "open_ended": True}):
        with pytest.raises(data.DataError):
            data.validate(component(wrong), schema, "x.yaml")


@pytest.mark.parametrize("relative", _files("compat-matrix"))
def test_component_name_is_its_file_name(relative):
    assert data.load(relative)["name"] == Path(relative).stem


@pytest.mark.parametrize("relative", _files("rules/crds") + _files("rules/hop-notes"))
def test_rule_file_is_named_after_what_it_covers(relative):
    document = data.load(relative)
    assert document.get("component", document.get("distro")) == Path(relative).stem


def _all_sources() -> list[str]:
    sources = []
    for component in COMPONENTS.values():
        sources += [component.get("one_minor_at_a_time_source"), component["detect"].get("chart_versions_source"),
                    component["detect"].get("app_patches_source")]
        for release in component["releases"]:
            sources.append(release["source"])
            sources += [req.get("source") for req in release.get("requires", ())]
    sources += [rule["source"] for _, rule in _crd_rules()]
    sources += [note["source"] for _, doc in data.load_folder("rules/hop-notes") for note in doc["notes"]]
    return [s for s in sources if s is not None]


def test_every_source_is_a_single_https_url():
    bad = [s for s in _all_sources() if not re.fullmatch(r"https://[^\s<>\"]+", s)]
    assert bad == []


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_releases_are_sorted_and_unique(name):
    versions = [_key(r["version"]) for r in COMPONENTS[name]["releases"]]
    assert versions == sorted(set(versions))


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_kubernetes_min_is_not_above_max(name):
    for release in COMPONENTS[name]["releases"]:
        low, high = release["kubernetes"]["min"], release["kubernetes"]["max"]
        if low and high:
            assert _key(low) <= _key(high), f"{name} {release['version']}"
        tested = release["kubernetes"].get("tested", [])
        assert tested == sorted(tested, key=_key)


def test_every_requirement_names_a_known_release_of_a_known_component():
    for name, component in COMPONENTS.items():
        for release in component["releases"]:
            for req in release.get("requires", ()):
                assert req["component"] in COMPONENTS, f"{name} {release['version']} requires {req['component']}"
                known = {r["version"] for r in COMPONENTS[req["component"]]["releases"]}
                assert req["version"] in known, f"{name} {release['version']} requires {req}"


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_chart_lines_name_known_releases_once(name):
    detect = COMPONENTS[name]["detect"]
    lines = detect.get("chart_versions")
    if lines in (None, "same"):
        return
    assert detect.get("charts"), "a chart mapping without a chart to detect"
    pairs = [(entry["chart"], entry["app"]) for entry in lines]
    assert len(pairs) == len(set(pairs))
    known = {r["version"] for r in COMPONENTS[name]["releases"]}
    assert {app for _, app in pairs} <= known


def _with_app_patches() -> list[str]:
    return sorted(name for name, c in COMPONENTS.items() if isinstance(c["detect"].get("chart_versions"), list)
                  and any("app_patches" in entry for entry in c["detect"]["chart_versions"]))


@pytest.mark.parametrize("name", _with_app_patches())
def test_the_app_patch_of_each_chart_version_is_on_its_lines_and_never_goes_back(name):
    """A chart version listed once, on its entry's line, shipping a patch of its entry's app minor; on
    each line a later chart version never ships an older app patch (what a range past the listed ones
    relies on: components.chart_patches)."""
    seen: set[str] = set()
    for entry in COMPONENTS[name]["detect"]["chart_versions"]:
        pairs = sorted((_key(chart), _key(app)) for chart, app in entry.get("app_patches", {}).items())
        assert not seen & set(entry.get("app_patches", {})), f"{name}: a chart version in two entries"
        seen |= set(entry.get("app_patches", {}))
        line = _key(entry["chart"])
        assert all(chart[:len(line)] == line and app[:2] == _key(entry["app"]) for chart, app in pairs), entry
        assert [app for _, app in pairs] == sorted(app for _, app in pairs), entry


def test_the_schema_asks_a_source_of_app_patches():
    component = {"name": "x", "title": "X", "data_checked": "2026-12-01", "one_minor_at_a_time": "unknown",
                 "detect": {"charts": [{"name": "x", "repositories": ["https://example.org/charts"]}],
                            "chart_versions_source": "https://example.org/chart",
                            "chart_versions": [{"chart": "4.10", "app": "1.10", "app_patches": {"4.10.1": "1.10.1"}}]},
                 "releases": [{"version": "1.10", "released": None, "kubernetes": {"min": None, "max": None},
                               "source": "https://example.org/x", "source_kind": "primary"}]}
    schema = data.schema_for("compat-matrix/x.yaml")
    with pytest.raises(data.DataError, match="app_patches_source"):
        data.validate(component, schema, "x.yaml")
    component["detect"]["app_patches_source"] = "https://example.org/index.yaml"
    data.validate(component, schema, "x.yaml")
    component["detect"]["chart_versions"][0]["app_patches"] = {"4.10.1": "v1.10.1"}
    with pytest.raises(data.DataError):
        data.validate(component, schema, "x.yaml")


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_a_component_can_be_detected(name):
    detect = COMPONENTS[name]["detect"]
    assert any(detect.get(key) for key in ("charts", "images", "crd_groups", "kustomize_urls"))


@pytest.mark.parametrize("key", ["images", "crd_groups"])
def test_images_and_crd_groups_belong_to_one_component(key):
    owners: dict[str, str] = {}
    for name, component in COMPONENTS.items():
        for value in component["detect"].get(key, ()):
            assert value not in owners, f"{value} in {owners.get(value)} and {name}"
            owners[value] = name


def test_crd_rules_belong_to_the_component_owning_their_group():
    for component, rule in _crd_rules():
        assert component in COMPONENTS
        group = rule["apiVersion"].rpartition("/")[0]
        assert group in COMPONENTS[component]["detect"]["crd_groups"], rule["id"]
        assert rule["id"] == f"{component}/{rule['apiVersion']}/{rule['kind']}"


def test_crd_rules_are_unique_and_ordered_in_time():
    seen = set()
    for _, rule in _crd_rules():
        key = (rule["apiVersion"], rule["kind"])
        assert key not in seen, rule["id"]
        seen.add(key)
        if rule["deprecated_in"] and rule["removed_in"]:
            assert _key(rule["deprecated_in"]) <= _key(rule["removed_in"]), rule["id"]
        assert rule["removed_in"] or rule["deprecated_in"], f"{rule['id']} says nothing"


@pytest.mark.parametrize("relative", _files("rules/hop-notes"))
def test_hop_notes_cover_the_supported_hops_in_order(relative):
    notes = data.load(relative)["notes"]
    minors = [_key(note["minor"]) for note in notes]
    assert minors == sorted(minors)
    newest = _key(data.load("rules/kubernetes.yaml")["newest_minor"])
    assert all((1, 32) <= minor <= (newest[0], newest[1] + 1) for minor in minors)
    # A note for a minor not out yet rests on pre-release sources: it says so.
    assert all(note.get("status") == "projected" for note in notes if _key(note["minor"]) > newest)


def test_a_removal_in_a_minor_not_out_yet_is_marked_projected():
    newest = _key(data.load("rules/kubernetes.yaml")["newest_minor"])
    for _, document in data.load_folder("rules/core"):
        for rule in document["rules"]:
            if rule["removed_in"] and _key(rule["removed_in"]) > newest:
                assert rule.get("status") == "projected", rule["id"]


def test_every_distro_has_hop_notes():
    assert {Path(f).stem for f in _files("rules/hop-notes")} == {"kubernetes", "k3s", "rke2"}


# --- Seed 002, §4.1 (and §1.2, §3.2): what the hand-written plan states, checked against the data.

def _supports(component: str, version: str, first: str, last: str) -> bool:
    k8s = _release(component, version)["kubernetes"]
    return k8s["min"] is not None and k8s["max"] is not None and \
        _key(k8s["min"]) <= _key(first) and _key(last) <= _key(k8s["max"])


AGREES = [
    # (text in seed 002, check on the data)
    ("1.17:1.29-1.32", lambda: _supports("cilium", "1.17", "1.29", "1.32")),
    ("1.18:1.30-1.33", lambda: _supports("cilium", "1.18", "1.30", "1.33")),
    ("1.19:1.32-1.35", lambda: _supports("cilium", "1.19", "1.32", "1.35")),
    ("Cilium 1.20 targets v1.6.1", lambda: _release("cilium", "1.20")["requires"][0]["version"] == "1.6"),
    ("1.12:adds 1.36", lambda: _release("longhorn", "1.12")["kubernetes"]["max"] == "1.36"),
    ("1.11.1:1.32-1.35", lambda: _release("longhorn", "1.11")["kubernetes"]["max"] == "1.35"),
    ("v1.9 validates 1.34/1.35/1.36", lambda: _supports("kubevirt", "1.9", "1.34", "1.36")),
    ("1.21 supports 1.33-1.36", lambda: _supports("cert-manager", "1.21", "1.33", "1.36")),
    ("1.30 supports 1.34/1.35/1.36", lambda: _supports("cloudnative-pg", "1.30", "1.34", "1.36")),
    ("1.29 supports 1.33-1.35", lambda: _supports("cloudnative-pg", "1.29", "1.33", "1.35")),
    ("v1.16 tested→1.33", lambda: _release("velero", "1.16")["kubernetes"]["tested"][-1] == "1.33"),
    ("v1.17 tested→1.34", lambda: _release("velero", "1.17")["kubernetes"]["tested"][-1] == "1.34"),
    ("8.7.2, Velero v1.15.x", lambda: _app_for_chart("velero", "8.7.2") == {"1.15"}),
    ("3.3.x too old for 1.36", lambda: _release("kyverno", "1.13")["kubernetes"]["max"] == "1.31"
                                        and _app_for_chart("kyverno", "3.3.9") == {"1.13"}),
    ("Longhorn 1.7.3** must step 1.7→1.8", lambda: COMPONENTS["longhorn"]["one_minor_at_a_time"] is True),
]

DIFFERS = [
    # (what seed 002 says, what the sources say, check on the data)
    ("1.20:1.33-1.36", "Cilium 1.20: no range in a primary source (unknown)",
     lambda: _release("cilium", "1.20")["kubernetes"] == {"min": None, "max": None}),
    ("1.7:≤~1.31", "Longhorn 1.7 lists 1.26-1.28 as tested",
     lambda: _release("longhorn", "1.7")["kubernetes"]["max"] == "1.28"),
    ("v2.7+ needed for 1.36", "Flux 2.7 supports 1.32-1.34; 2.9 is the first with 1.36",
     lambda: _release("flux", "2.7")["kubernetes"]["max"] == "1.34"
     and _release("flux", "2.8")["kubernetes"]["max"] == "1.35"
     and _release("flux", "2.9")["kubernetes"]["max"] == "1.36"),
    ("v2.7 **removed** the image-automation", "Flux 2.7 deprecated image v1beta2; 2.9 removed it",
     lambda: {(r["deprecated_in"], r["removed_in"]) for c, r in _crd_rules()
              if c == "flux" and r["apiVersion"] == "image.toolkit.fluxcd.io/v1beta2"} == {("2.7", "2.9")}),
    ("chart 0.29.0 (op ≈1.26/1.27)", "CNPG chart 0.29 ships operator 1.30",
     lambda: _app_for_chart("cloudnative-pg", "0.29.0") == {"1.30"}),
]


@pytest.mark.parametrize("quote, check", AGREES, ids=[q for q, _ in AGREES])
def test_seed_002_facts_that_the_sources_confirm(quote, check):
    assert quote in shared_or_skip(SEED_002).read_text(encoding="utf-8")
    assert check()


@pytest.mark.parametrize("quote, truth, check", DIFFERS, ids=[q for q, _, _ in DIFFERS])
def test_seed_002_facts_that_the_sources_correct(quote, truth, check):
    assert quote in shared_or_skip(SEED_002).read_text(encoding="utf-8")
    assert check(), truth
