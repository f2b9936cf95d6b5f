"""A pin moved to another release keeps its style; a value is rewritten where it stands, or refused."""

from __future__ import annotations

import pytest

from scanner.changes.pin_text import Target, moved_pin, with_version
from scanner.changes.scalar_edit import NotEditable, replace_scalar
from scanner.semver import parse_pin


@pytest.mark.parametrize("pin, target, moved", [
    ("1.16.5", Target((1, 17), (0,), "1.17.0"), "1.17.0"),
    ("v2.5.1", Target((2, 6), (0,), "2.6.0"), "v2.6.0"),
    ("=1.16.5", Target((1, 17), (0,), "1.17.0"), "=1.17.0"),
    (">=1.7.0 <1.8.0", Target((1, 8), (2,)), ">=1.8.2 <1.9.0"),  # the patch that states the range
    (">=1.7.0 <1.8.0", Target((1, 11), (0,)), ">=1.11.0 <1.12.0"),
    (">=1.7.0, <1.8.0", Target((1, 8), (0,)), ">=1.8.0, <1.9.0"),
    ("3.3.x", Target((3, 4)), "3.4.x"),
    ("v1.14.X", Target((1, 15)), "v1.15.X"),
    ("1.16.*", Target((1, 17)), "1.17.*"),
    ("1.16", Target((1, 17)), "1.17"),
    ("~1.7.0", Target((1, 8)), "~1.8.0"),
    ("~4.10.0", Target((4, 12)), "~4.12.0"),
    ("^0.22.1", Target((0, 23)), "^0.23.0"),
    (">=65.0.0 <66.0.0", Target((66,)), ">=66.0.0 <67.0.0"),  # a chart line that is a major
    ("65.x", Target((66,)), "66.x"),
    (">=0.15.0 <0.16.0", Target((1, 0)), ">=1.0.0 <1.1.0"),
])
def test_a_pin_keeps_its_style(pin, target, moved):
    assert moved_pin(pin, target) == moved
    line = ".".join(map(str, target.line))
    assert all(interval.low[:len(target.line)] == target.line for interval in parse_pin(moved)), line


@pytest.mark.parametrize("pin, target", [
    (">=0.22.0 <1.0.0", Target((0, 23))),  # several lines: how far it should reach is a person's call
    ("^1.7.0", Target((2, 0))),  # the whole major
    ("*", Target((1, 17))),
    ("latest", Target((1, 17))),
    ("not a version", Target((1, 17))),
    ("65.8.1", Target((66,))),  # exact, and no chart version of line 66 is known
    (">=45.26.0 <45.27.0", Target((46,))),  # a minor line moved to a major one: no range in its style
])
def test_what_cannot_be_moved_in_its_style_is_refused(pin, target):
    assert moved_pin(pin, target) is None


def test_a_range_that_admits_the_line_already_is_kept():
    """It installs the newest of its line at every reconcile: nothing to write."""
    assert moved_pin(">=1.11.0 <1.12.0", Target((1, 11), (3,))) == ">=1.11.0 <1.12.0"
    assert moved_pin("1.11.0", Target((1, 11), (3,), "1.11.3")) == "1.11.3"  # an exact pin is not


@pytest.mark.parametrize("url, moved", [
    ("github.com/fluxcd/flux2/manifests/install?ref=v2.5.1", "github.com/fluxcd/flux2/manifests/install?ref=v2.6.0"),
    ("https://github.com/kubernetes-sigs/gateway-api/releases/download/v2.5.1/standard-install.yaml",
     "https://github.com/kubernetes-sigs/gateway-api/releases/download/v2.6.0/standard-install.yaml"),
    ("https://github.com/x/y//config?ref=v2.5.1&timeout=90s", "https://github.com/x/y//config?ref=v2.6.0&timeout=90s"),
    ("https://github.com/x/v2.5.1/y?ref=v2.5.10", None),  # the version is not there as the pin
    ("https://github.com/x/y?ref=v2.5.1#v2.5.1", "https://github.com/x/y?ref=v2.6.0#v2.5.1"),
])
def test_a_release_url_moves_its_version_only(url, moved):
    assert with_version(url, "v2.5.1", "v2.6.0") == moved


TEXT = 'spec:\n  a: "1.16.5" # pinned\n  b: 1.9\n  c: [x, 1.2.3]  # flow\n  d: \'v1.0.0\'\r\n  e: |\n    1.0.0\n'


@pytest.mark.parametrize("line, column, old, new, written", [
    (2, 6, "1.16.5", "1.17.0", '  a: "1.17.0" # pinned'),
    (4, 10, "1.2.3", "1.3.0", "  c: [x, 1.3.0]  # flow"),
    (5, 6, "v1.0.0", "v1.1.0", "  d: 'v1.1.0'\r"),  # a CRLF line keeps its carriage return
])
def test_a_scalar_is_rewritten_where_it_stands(line, column, old, new, written):
    edited = replace_scalar(TEXT, line, column, old, new)
    lines, before = edited.split("\n"), TEXT.split("\n")
    assert lines[line - 1] == written
    assert [x for i, x in enumerate(lines) if i != line - 1] == [x for i, x in enumerate(before) if i != line - 1]


@pytest.mark.parametrize("line, column, old, new, why", [
    (3, 6, "1.9", "1.10", "would be read as 1.1"),  # a float unquoted: 1.10 is 1.1
    (6, 6, "1.0.0", "1.1.0", "block scalar"),
    (2, 6, "1.16.4", "1.17.0", "not '1.16.4'"),
    (2, 6, "1.16.5", 'a"b', "cannot be written double-quoted"),
    (9, 1, "x", "y", "not in the file"),
])
def test_a_scalar_that_cannot_be_rewritten_in_place_is_refused(line, column, old, new, why):
    with pytest.raises(NotEditable, match=why):
        replace_scalar(TEXT, line, column, old, new)
