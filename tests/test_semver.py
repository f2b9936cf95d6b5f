"""Version pins as Flux, Argo CD and Helm write them, and which component minors they admit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalogs import catalog, gitops, mesh, store
from scanner.semver import admits_line, floats, parse_pin


@pytest.mark.parametrize("pin, admitted, refused", [
    (">=1.7.0 <1.8.0", ["1.7"], ["1.6", "1.8"]),
    (">=1.7.0, <1.8.0", ["1.7"], ["1.8"]),
    ("3.3.x", ["3.3"], ["3.2", "3.4"]),
    ("3.3.*", ["3.3"], ["3.4"]),
    ("1.16.5", ["1.16"], ["1.15", "1.17"]),
    ("v1.16.5", ["1.16"], ["1.17"]),
    ("~1.2.3", ["1.2"], ["1.3"]),
    ("~1.2", ["1.2"], ["1.3"]),
    ("^1.2.0", ["1.2", "1.9"], ["1.1", "2.0"]),
    ("^0.22.0", ["0.22"], ["0.23"]),
    (">=0.22.0 <1.0.0", ["0.22", "0.29"], ["0.21", "1.0"]),
    (">1.2", ["1.3"], ["1.2"]),
    ("<=1.2", ["1.2", "1.1"], ["1.3"]),
    ("1.2 - 1.4", ["1.2", "1.4"], ["1.5", "1.1"]),
    (">=1 <2 || 3.x", ["1.5", "3.1"], ["2.0", "4.0"]),
    ("*", ["0.1", "9.9"], []),
])
def test_ranges_admit_the_minors_they_name(pin, admitted, refused):
    intervals = parse_pin(pin)
    assert [m for m in admitted if not admits_line(intervals, m)] == []
    assert [m for m in refused if admits_line(intervals, m)] == []


@pytest.mark.parametrize("text", ["main", "HEAD", "release-1.2", "latest-stable", ">=foo"])
def test_git_refs_and_words_are_not_ranges(text):
    assert parse_pin(text) is None


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_an_exact_version_admits_its_own_minor_only(major, minor, patch):
    intervals = parse_pin(f"{major}.{minor}.{patch}")
    assert admits_line(intervals, f"{major}.{minor}")
    assert not admits_line(intervals, f"{major}.{minor + 1}")
    assert not admits_line(intervals, f"{major + 1}.{minor}")


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_a_half_open_minor_range_admits_exactly_the_minors_inside(low, high, probe):
    intervals = parse_pin(f">=1.{low}.0 <1.{high}.0")
    assert admits_line(intervals, f"1.{probe}") == (low <= probe < high)


def test_chart_ranges_map_through_the_chart_line():
    known = catalog([store()]).components["store"]
    assert [r.version for r in known.releases_admitted(">=6.0.0 <8.0.0", chart_version=True)] == ["1.8", "1.9"]
    assert [r.version for r in known.releases_admitted("5.2.1", chart_version=True)] == ["1.7"]
    # An image tag or a remote ref is an app version, not a chart version.
    assert [r.version for r in known.releases_admitted("v1.8.2", chart_version=False)] == ["1.8"]
    assert known.releases_admitted("9.0.0", chart_version=True) == ()


def test_same_numbered_charts_resolve_directly():
    known = catalog([mesh(), gitops()]).components
    assert [r.version for r in known["mesh"].releases_admitted("1.18.x", chart_version=True)] == ["1.18"]
    assert [r.version for r in known["gitops"].releases_admitted(">=2.4.0 <2.7.0", chart_version=True)] == \
        ["2.4", "2.5", "2.6"]
    assert known["mesh"].releases_admitted("not-a-version", chart_version=True) is None


def test_pins_without_an_upper_bound_float():
    assert floats("*") and floats(">=1.2") and floats(">=1 <2 || >=3") and floats("latest")
    assert not floats(">=1.7.0 <1.8.0") and not floats("3.3.x") and not floats("1.16.5") and not floats("main")
