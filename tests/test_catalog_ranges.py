"""Ranges finer than a component minor: patches that restate a range, chart lines with their own.

Longhorn 1.7.3 lists newer Kubernetes than 1.7.0; kube-prometheus-stack 49 and 50 ship the same
operator with different kubeVersion floors. The catalog keeps the .0 statement as a release's
range and exposes the finer facts with their sources.
"""

from __future__ import annotations

from scanner.components.catalog import Range, component_from_data
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
