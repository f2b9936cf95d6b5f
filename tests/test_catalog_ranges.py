"""Ranges finer than a component minor: patches that restate a range, chart lines with their own.

Longhorn 1.7.3 lists newer Kubernetes than 1.7.0; kube-prometheus-stack 49 and 50 ship the same
operator with different kubeVersion floors. The catalog keeps the .0 statement as a release's
range and exposes the finer facts with their sources.
"""

from __future__ import annotations

from scanner.components.catalog import SUPPORTED, UNKNOWN, UNSUPPORTED, Range, component_from_data
from scanner.versions import Minor

SOURCE = "https://example.org/compat"


def component(**extra) -> dict:
    return {"name": "x", "title": "X", "data_checked": "2026-12-01", "one_minor_at_a_time": True,
            "one_minor_at_a_time_source": SOURCE, "detect": extra.pop("detect", {}), "releases": [
                {"version": "1.7", "released": None, "kubernetes": {"min": "1.21", "max": "1.28"},
                 "source": SOURCE, "source_kind": "primary", **extra}]}


PATCHED = component(patches=[
    {"from": "1.7.3", "kubernetes": {"min": "1.21", "max": "1.31"}, "source": SOURCE + "/1.7.3"},
    {"from": "1.7.6", "kubernetes": {"min": "1.25", "max": "1.32"}, "source": SOURCE + "/1.7.6"}])


def test_a_release_keeps_the_dot_zero_range_and_names_the_patch_that_widens_it() -> None:
    release = component_from_data(PATCHED).releases[0]
    assert release.supports(Minor(1, 30)) is False
    assert release.patch_supporting(Minor(1, 30)) == "1.7.3"
    assert release.patch_supporting(Minor(1, 32)) == "1.7.6"
    assert release.patch_supporting(Minor(1, 27)) == "1.7"
    assert release.patch_supporting(Minor(1, 33)) is None
    assert release.support_text == "1.21–1.28; from 1.7.3: 1.21–1.31; from 1.7.6: 1.25–1.32"


def test_the_range_at_a_patch_is_the_newest_statement_up_to_it() -> None:
    release = component_from_data(PATCHED).releases[0]
    assert release.range_at("1.7.2") == Range(Minor(1, 21), Minor(1, 28))
    assert release.range_at("v1.7.5") == Range(Minor(1, 21), Minor(1, 31))
    assert release.range_at("1.7.9") == Range(Minor(1, 25), Minor(1, 32))


def test_a_chart_line_with_its_own_range_replaces_the_apps() -> None:
    chart = component(detect={"chart_versions": [
        {"chart": "49", "app": "1.7"},
        {"chart": "50", "app": "1.7", "kubernetes": {"min": "1.19", "max": None}, "source": SOURCE + "/50"}],
        "chart_versions_source": SOURCE})
    found = component_from_data(chart)
    assert found.chart_range("49.2.0") is None
    assert found.chart_range("50.3.1") == (Range(Minor(1, 19), None), SOURCE + "/50")


# --- open-ended statements speak for the minors out when they were read -----------------------

def open_ended(checked: str) -> dict:
    document = component()
    document["data_checked"] = checked
    document["releases"][0]["kubernetes"] = {"min": "1.25", "max": None, "open_ended": True}
    return document


def test_an_open_ended_statement_vouches_only_for_minors_out_when_it_was_read() -> None:
    """rules/kubernetes.yaml: 1.36 came out on 2026-04-22, 1.37 on 2026-08-26. A "1.25+" read on
    2026-08-22 says nothing of 1.37 (or 1.38): unknown there, never supported, never excluded."""
    release = component_from_data(open_ended("2026-08-22")).releases[0]
    assert release.through == Minor(1, 36)
    assert [release.support(Minor(1, n)) for n in (24, 25, 36, 37, 38)] == [
        UNSUPPORTED, SUPPORTED, SUPPORTED, UNKNOWN, UNKNOWN]
    assert release.support_text == "1.25 and later (read when 1.36 was the newest)"
    again = component_from_data(open_ended("2026-12-01")).releases[0]  # read again after 1.37 came out
    assert (again.support(Minor(1, 37)), again.support(Minor(1, 38))) == (SUPPORTED, UNKNOWN)


def test_a_release_scheduled_but_not_out_extends_nothing() -> None:
    """1.38 is listed as scheduled for 2026-12-16: a statement read on that day or later still stops
    at 1.37 until the data says 1.38 is out."""
    assert component_from_data(open_ended("2026-12-20")).releases[0].through == Minor(1, 37)


def test_a_closed_range_is_not_limited_by_its_check_date() -> None:
    release = component_from_data(component()).releases[0]
    assert release.through is None and release.support(Minor(1, 28)) == SUPPORTED


def test_an_open_ended_patch_and_chart_line_are_limited_alike() -> None:
    document = open_ended("2026-08-22")
    document["releases"][0]["kubernetes"] = {"min": "1.21", "max": "1.28"}
    document["releases"][0]["patches"] = [
        {"from": "1.7.3", "kubernetes": {"min": "1.25", "max": None, "open_ended": True}, "source": SOURCE}]
    release = component_from_data(document).releases[0].at_patch("1.7.4")
    assert (release.support(Minor(1, 36)), release.support(Minor(1, 37))) == (SUPPORTED, UNKNOWN)


def test_argo_cd_patch_pins_get_the_range_their_patch_states() -> None:
    """Argo CD tested 1.30–1.33 up to 3.2.3 and 1.31–1.34 from 3.2.4 (tested-kubernetes-versions.md at
    each tag); a pin of 3.2.1 runs with the .0 range, a pin of 3.2.5 with 3.2.4's."""
    from scanner.components.catalog import load_catalog

    argo = load_catalog().components["argo-cd"]
    release = argo.release("3.2")
    assert release.at_patch("3.2.1").range == Range(Minor(1, 30), Minor(1, 33))
    assert release.at_patch("3.2.5").range == Range(Minor(1, 31), Minor(1, 34))
    assert argo.release("3.1").at_patch("3.1.10").range == Range(Minor(1, 30), Minor(1, 33))
    assert argo.release("3.1").at_patch("3.1.11").range == Range(Minor(1, 31), Minor(1, 34))
    assert argo.release("3.3").at_patch("3.3.4").range == Range(Minor(1, 31), Minor(1, 34))
    assert argo.release("3.3").at_patch("3.3.5").range == Range(Minor(1, 32), Minor(1, 35))


def test_an_open_ended_statement_read_at_an_old_commit_speaks_for_the_minors_out_then() -> None:
    """Flux's installation page said "v1.27 and later" for Flux 2.0 on 2023-07-20, and was rewritten
    for the next release: that statement says nothing of 1.28 (out 2023-08-15) or later."""
    document = open_ended("2026-08-07")
    document["releases"][0]["kubernetes"]["as_of"] = "2023-07-20"
    release = component_from_data(document).releases[0]
    assert release.through == Minor(1, 27)
    assert (release.support(Minor(1, 27)), release.support(Minor(1, 28))) == (SUPPORTED, UNKNOWN)


def test_an_open_ended_statement_from_an_old_copy_speaks_for_the_minors_out_on_the_copy_date() -> None:
    """A file checked on 2026-12-02 against a repository whose newest commit is of 2023-05-24
    (sources_as_of): its "1.16+" says nothing of 1.28 (out 2023-08-15) or later."""
    document = open_ended("2026-12-02")
    document["sources_as_of"] = "2023-05-24"
    release = component_from_data(document).releases[0]
    assert release.through == Minor(1, 27)
    assert (release.support(Minor(1, 27)), release.support(Minor(1, 28))) == (SUPPORTED, UNKNOWN)


def test_a_data_files_releases_are_read_when_first_asked_for() -> None:
    """A scan reads every data file's detection and the releases of the components its tree pins only
    (issue 27: reading all of them was a tenth of a one-file run); equality and replace see them all."""
    import dataclasses

    from scanner.components.catalog import load_catalog_from

    components = load_catalog_from().components.values()
    assert all("releases" not in vars(c) for c in components)  # none read yet
    for each in components:  # each file's releases read, sorted, as they were read at load
        assert each.releases == tuple(sorted(each.releases, key=lambda r: r.key)) and "releases" in vars(each)
    first, again = component_from_data(component()), component_from_data(component())
    assert first == again and hash(first) == hash(again) and first.releases[0].version == "1.7"
    assert dataclasses.replace(again, title="t").releases == first.releases
