"""A Flux homelab as `flux bootstrap` left it in 2021 (tests/fixtures/flux-bootstrap): the blockers it
really has are found.

Flux v0.13 is older than every release kubehop's data lists; it is known only by the release label
`flux install` stamps on every object. Reaching 1.36 from k3s 1.20 needs Flux 2.9, and Flux 2.7 stops
serving the v1beta1/v2beta1 APIs every Kustomization, source and HelmRelease of the tree is written in:
each one is a blocker at the hop that needs Flux 2.7, at its own file and line, and the plan migrates
them in the window that moves Flux to 2.7.
"""

from __future__ import annotations

import json

import yaml

from conftest import REPO, run_kubehop

TREE = "tests/fixtures/flux-bootstrap"
GOTK = f"{TREE}/cluster/base/flux-system/gotk-components.yaml"


def run_json(*args: str) -> tuple[int, dict]:
    done = run_kubehop(*args, "--format", "json")
    assert "Traceback" not in done.stderr.decode(), done.stderr.decode()
    return done.returncode, json.loads(done.stdout)


def flux_objects() -> set[tuple[str, int, str, str]]:
    """(file, line, apiVersion, kind) of every Flux object of the tree, read here from the files."""
    found = set()
    for path in sorted((REPO / TREE).rglob("*.yaml")):
        for node in yaml.compose_all(path.read_text()):
            document = yaml.safe_load(yaml.serialize(node))
            if document and document["apiVersion"].split("/")[0].endswith(".toolkit.fluxcd.io"):
                found.add((str(path.relative_to(REPO)), node.start_mark.line + 1, document["apiVersion"],
                           document["kind"]))
    return found


def test_the_flux_release_is_read_from_its_label_and_planned_through_every_hop():
    code, plan = run_json("plan", "--target", "1.36", TREE)
    assert code == 1
    assert (plan["from"], plan["distro"]) == ("1.20", "k3s")  # the system-upgrade Plans' channel
    [flux] = [c for c in plan["components"] if c["name"] == "flux"]
    assert (flux["start"], flux["end"]) == ("0.13", "2.9")
    assert [(p["file"], p["line"], p["pin"]) for p in flux["pins"]] == [(GOTK, 10, "v0.13.4")]
    moves = [(w["to"], s["from"], s["to"]) for w in plan["windows"] for s in w["before"] if s["component"] == "flux"]
    # One Flux release after another, each move before the hop that needs it; 2.7 is among them.
    assert [m[1] for m in moves[1:]] == [m[2] for m in moves[:-1]]
    [(needs_27, _, _)] = [m for m in moves if m[2] == "2.7"]
    # The v1beta1/v2beta1 objects are migrated in that window, before the move that removes them.
    [window] = [w for w in plan["windows"] if w["to"] == needs_27]
    migrated = {(o["file"], o["line"]) for m in window["migrations"] for o in m["objects"]}
    assert migrated == {(f, line) for f, line, _, _ in flux_objects()}
    assert all(m["removed_in"] == "flux 2.7" for m in window["migrations"])


def test_scan_reports_every_flux_object_as_a_blocker_at_the_hop_that_needs_flux_2_7():
    code, report = run_json("scan", "--target", "1.36", TREE)
    assert code == 1
    objects = flux_objects()
    assert len(objects) == 10  # 4 Kustomizations, 3 sources, 3 HelmReleases
    blockers = {(f["file"], f["line"], f["object"]["apiVersion"], f["object"]["kind"]): f
                for f in report["findings"] if f["rule"].startswith("flux/")}
    assert set(blockers) == objects
    assert {(f["severity"], f["hop"]) for f in blockers.values()} == {("error", "hop to 1.34")}
    # Flux itself: unverified while no release states support (the data starts at 2.0), then moved.
    flux = [(f["rule"], f["hop"], f["file"], f["line"]) for f in report["findings"]
            if f["rule"].startswith("component/flux/")]
    assert flux == [("component/flux/unverified", "hop to 1.21", GOTK, 10),
                    ("component/flux/unknown-support", "hop to 1.25", GOTK, 10)]
    # cert-manager 1.3 is older than the data's releases (its range unknown): it moves to the oldest that supports 1.21.
    [cert_manager] = [f for f in report["findings"] if f["rule"].startswith("component/cert-manager/")]
    assert (cert_manager["hop"], cert_manager["file"]) == ("hop to 1.21",
                                                         f"{TREE}/cluster/core/cert-manager/helm-release.yaml")
    assert "1.3 is a release kubehop has no data on (its range is unknown); 1.7 is the oldest release stated to " \
           "support Kubernetes 1.21" in cert_manager["message"]
