"""`kubehop plan --window N`: each window written as the change set its pull request needs, and checked:
after writing it, the plan of the edited tree has no move and no API blocker left in that window but
the steps the change set listed for a person. On trees shaped like the seed's k3s homelab (Flux from
`flux bootstrap`, Ansible-pinned k3s, HelmReleases of every pin style) and like a homelab where Flux
reconciles itself from its OCI release manifests (tests/fixtures/flux-oci)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import FIXTURES, invoke

SEED = FIXTURES / "seed002"
FLUX_OCI = FIXTURES / "flux-oci"


def tree(source: Path, tmp_path: Path) -> Path:
    """A git checkout of `source`, as a user's repository."""
    root = tmp_path / "repo"
    shutil.copytree(source, root)
    git(root, "init", "-q", ".")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "tree")
    return root


def git(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True, env=env)


def plan(root: Path, *args: str) -> dict:
    done = invoke("plan", "--format", "json", *args, ".", cwd=root)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def change_set(root: Path, *args: str) -> dict:
    done = invoke("plan", "--format", "json", "--window", "1", *args, ".", cwd=root)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def left_in_window_1(root: Path, *args: str) -> tuple[set[str], list[dict]]:
    """The components W1 of the tree's plan still moves before its hop, and its API blockers."""
    window = plan(root, *args)["windows"][0]
    return {s["component"] for s in window["before"]}, window["api_blockers"]


def manual_components(written: dict) -> set[str]:
    return {m["what"].split()[0] for m in written["manual"]}


def regenerate_flux(root: Path, written: dict) -> None:
    """What a person does for the step the change set lists: `flux install --version=vX --export`
    writes gotk-components.yaml again at vX (here: its version stamps moved, as the new file has them)."""
    for manual in written["manual"]:
        found = re.match(r"flux install --version=(v[\d.]+) .* > (\S+)$", manual["command"] or "")
        if found:
            path = root / found.group(2)
            path.write_text(re.sub(r"v2\.\d+\.\d+", found.group(1), path.read_text()))


# --- the seed's homelab ----------------------------------------------------------------------------

def test_seed_window_1_is_a_diff_git_applies_that_leaves_only_the_flux_regeneration(tmp_path):
    root = tree(SEED, tmp_path)
    done = invoke("plan", "--from", "1.31", "--window", "1", "--diff", ".", cwd=root)
    assert done.returncode == 1  # one step is a person's: Flux's generated manifests
    assert "kubehop: left to a person: flux 2.4 → 2.5: the file is generated" \
        in done.stderr
    assert ("run: flux install --version=v2.5.0 --components=source-controller,kustomize-controller,helm-controller,"
            "notification-controller,image-reflector-controller,image-automation-controller --export > "
            "clusters/dev/flux-system/gotk-components.yaml") in done.stderr
    (tmp_path / "w1.diff").write_text(done.stdout)
    git(root, "apply", "--check", str(tmp_path / "w1.diff"))
    git(root, "apply", str(tmp_path / "w1.diff"))
    changed = git(root, "diff", "-U0").stdout
    # Only the pins move, each in its own style and with its comment; every other line stays.
    assert changes(changed) == [
        '-cilium_bootstrap_chart_version: "1.16.5"', '+cilium_bootstrap_chart_version: "1.17.0"',  # kept in step
        '-      version: "1.16.5"', '+      version: "1.17.0"',
        '-      version: "3.3.x"', '+      version: "3.4.x"',
    ]  # the hop waits for Flux
    moves, blockers = left_in_window_1(root, "--from", "1.31")
    assert moves == {"flux"} and blockers == []
    regenerate_flux(root, change_set(root, "--from", "1.31"))
    again = invoke("plan", "--from", "1.31", "--window", "1", "--diff", ".", cwd=root)
    assert again.returncode == 0, again.stderr  # nothing else is left: the run writes the hop
    assert changes(again.stdout) == ["-k3s_version: v1.31.5+k3s1", "+k3s_version: v1.32.13+k3s1"]


def changes(diff: str) -> list[str]:
    return [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def test_seed_campaign_to_1_36_one_change_set_at_a_time(tmp_path):
    """W1 written, its person's step done, merged; again, until the tree runs 1.36: every change set
    leaves nothing in its window but what it listed, and the tree ends where the seed's plan did."""
    root = tree(SEED, tmp_path)
    hops = []
    for _ in range(25):
        done = invoke("plan", "--target", "1.36", "--format", "json", "--window", "1", ".", cwd=root)
        if done.returncode == 2:  # the tree is at the target: nothing left to plan
            assert "is not newer" in done.stderr
            break
        written = json.loads(done.stdout)
        current = written["from"]
        assert invoke("plan", "--target", "1.36", "--window", "1", "--write", ".", cwd=root).returncode in (0, 1)
        regenerate_flux(root, written)
        moves, blockers = left_in_window_1(root, "--target", "1.36", "--from", current)
        later = {m["component"] for m in written["moves"] if m["later"]}
        assert moves <= later | manual_components(written) - {"flux"}, (current, moves, written["manual"])
        assert blockers == [], blockers
        hops.append((current, written["to"], sorted((m["component"], m["to"]) for m in written["moves"])))
        git(root, "commit", "-qam", f"{current} → {written['to']}")
    else:
        pytest.fail(f"the campaign did not reach 1.36: {hops}")
    assert hops[0] == ("1.31", "1.32", [("cilium", "1.17"), ("kyverno", "1.14")])
    assert [h[1] for h in hops if h[0] != h[1]][-1] == "1.36"
    read = lambda name: (root / name).read_text()  # noqa: E731
    assert "k3s_version: v1.36.4+k3s1" in read("infra/ansible/roles/k3s_server/defaults/main.yml")
    assert 'version: "1.20.0"' in read("platform/cilium/helmrelease.yaml")
    assert 'version: ">=1.21.0 <1.22.0"' in read("platform/cert-manager/helmrelease.yaml")
    assert 'version: ">=1.11.0 <1.12.0"' in read("platform/longhorn/helmrelease.yaml")
    assert 'cilium_bootstrap_chart_version: "1.20.0"' in read("infra/ansible/roles/cilium/defaults/main.yml")
    automation = read("platform/image-automation/image-update-automation.yaml")
    assert automation.startswith("apiVersion: image.toolkit.fluxcd.io/v1\n")  # migrated before Flux 2.9
    assert "v1beta2" not in read("platform/image-automation/per-service/pihole.example.yaml")


def test_a_one_minor_at_a_time_chain_lands_step_by_step_and_the_hop_waits_for_its_end(tmp_path):
    root = tree(SEED, tmp_path)
    written = change_set(root, "--from", "1.33")  # Longhorn 1.7.3 must reach 1.11 before the hop to 1.34
    [longhorn] = [m for m in written["moves"] if m["component"] == "longhorn"]
    assert (longhorn["from"], longhorn["to"]) == ("1.7.3", "1.8.2")
    assert [(s["from"], s["to"]) for s in longhorn["later"]] == [("1.8.2", "1.9"), ("1.9", "1.10"), ("1.10", "1.11")]
    assert written["hop"] == {"orders": [], "variables": []}
    assert any(m["what"] == "the hop to 1.34" for m in written["manual"])


# --- Flux reconciling itself from its OCI release manifests ---------------------------------------------

def test_the_plan_points_at_the_source_flux_reconciles_itself_from(tmp_path):
    done = invoke("plan", "--target", "1.33", ".", cwd=FLUX_OCI)
    assert ("flux 2.3 → 2.4: 2.4 supports 1.29–1.31\n       edit tests/fixtures/flux-oci/kubernetes/flux/config/"
            "flux.yaml:11:10\n") in done.stdout
    assert "bootstrap/kustomization.yaml:7" not in done.stdout  # a file Flux does not reconcile


def test_flux_from_oci_window_1_moves_the_running_source_and_keeps_bootstrap_in_step(tmp_path):
    root = tree(FLUX_OCI, tmp_path)
    done = invoke("plan", "--target", "1.33", "--window", "1", "--write", ".", cwd=root)
    assert done.returncode == 0, done.stderr  # the whole window is written
    changed = git(root, "diff", "-U0").stdout
    assert "-    tag: v2.3.0 # renovate: keep in step with bootstrap\n+    tag: v2.4.0 # renovate: keep in step with" \
           " bootstrap\n" in changed
    assert "+  - github.com/fluxcd/flux2/manifests/install?ref=v2.4.0\n" in changed
    assert "-      version: 1.16.5  # bumped by renovate\n+      version: 1.17.0  # bumped by renovate\n" in changed
    assert changed.count("+  version: v1.31.14+k3s1\n") == 2  # both system-upgrade Plans
    moves, blockers = left_in_window_1(root, "--target", "1.33", "--from", "1.30")
    assert moves == set() and blockers == []


def test_flux_from_oci_campaign_needs_no_person(tmp_path):
    root = tree(FLUX_OCI, tmp_path)
    runs = []
    for _ in range(8):
        done = invoke("plan", "--target", "1.33", "--window", "1", "--write", ".", cwd=root)
        if done.returncode == 2:
            break
        runs.append(done.returncode)
        git(root, "commit", "-qam", "window")
    assert runs and len(runs) <= 5
    text = lambda name: (root / name).read_text()  # noqa: E731
    assert "tag: v2.6.0" in text("kubernetes/flux/config/flux.yaml")
    assert "install?ref=v2.6.0" in text("kubernetes/bootstrap/kustomization.yaml")
    assert 'version: "v1.17.x"' in text("kubernetes/apps/cert-manager/helmrelease.yaml")  # 1.15, 1.16, 1.17 in turn
    assert "version: v1.33.13+k3s2" in text("kubernetes/apps/system-upgrade/plans/k3s.yaml")


# --- pin styles, the chart version a release takes, and what is left to a person -----------------------

STYLES = {
    "cluster/plans.yaml": ("apiVersion: upgrade.cattle.io/v1\nkind: Plan\nmetadata:\n  name: server\n"
                           "  namespace: system-upgrade\nspec:\n  version: v1.30.4+k3s1\n  concurrency: 1\n"
                           "  nodeSelector:\n    matchExpressions:\n"
                           "      - {key: node-role.kubernetes.io/control-plane, operator: Exists}\n"
                           "  upgrade:\n    image: rancher/k3s-upgrade\n"),
    "apps/cilium.yaml": ("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: cilium\n"
                         "  namespace: argocd\nspec:\n  source:\n    repoURL: https://helm.cilium.io\n"
                         "    chart: cilium\n    targetRevision: v1.16.5   # pinned\n"
                         "    helm:\n      valuesObject:\n        gatewayAPI: {enabled: true}\n"),
    "apps/ingress/kustomization.yaml": ("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
                                        "helmCharts:\n  - name: ingress-nginx\n"
                                        "    repo: https://kubernetes.github.io/ingress-nginx\n"
                                        "    version: 4.10.1\n    releaseName: ingress\n"),
    "apps/umbrella/Chart.yaml": ("apiVersion: v2\nname: edge\nversion: 0.1.0\ndependencies:\n  # the controller\n"
                                 "  - name: ingress-nginx\n    version: \"~4.10.0\"\n"
                                 "    repository: https://kubernetes.github.io/ingress-nginx\n"),
    "infra/vars.yml": ("---\nkyverno_version: 'v1.12.5'\ngateway_api_crds:\n  - https://github.com/kubernetes-sigs/"
                       "gateway-api/releases/download/v1.1.0/standard-install.yaml\n"),
}


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_every_kind_of_pin_in_its_own_style(tmp_path):
    root = write_tree(tmp_path / "repo", STYLES)
    done = invoke("plan", "--target", "1.31", "--no-render", "--window", "1", "--diff", ".", cwd=root)
    assert done.returncode == 0, done.stderr  # every step written, so the hop too
    changes = [line for line in done.stdout.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    assert changes == [
        "-    targetRevision: v1.16.5   # pinned", "+    targetRevision: v1.17.0   # pinned",  # Argo CD
        # The exact chart version of a kustomize helmCharts entry: the newest 4.12 the data lists (app_patches).
        "-    version: 4.10.1", "+    version: 4.12.8",
        '-    version: "~4.10.0"', '+    version: "~4.12.0"',  # a Chart.yaml dependency: the chart line of 1.12
        "-  version: v1.30.4+k3s1", "+  version: v1.31.14+k3s1",  # the hop
        "-kyverno_version: 'v1.12.5'", "+kyverno_version: 'v1.13.0'",  # a variable, single-quoted
        "-  - https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.1.0/standard-install.yaml",
        "+  - https://github.com/kubernetes-sigs/gateway-api/releases/download/v1.2.0/standard-install.yaml",
    ]
    assert "left to a person:" not in done.stderr


def test_an_exact_chart_version_comes_from_the_repository_index(tmp_path):
    """helm's repository cache holds the index: the newest 4.12 chart is written, never a guess."""
    root = write_tree(tmp_path / "repo", STYLES)
    cache, config = tmp_path / "helm-cache", tmp_path / "helm-config"
    cache.mkdir()
    config.mkdir()
    (config / "repositories.yaml").write_text(
        "repositories:\n  - {name: ingress, url: https://kubernetes.github.io/ingress-nginx}\n")
    (cache / "ingress-index.yaml").write_text(
        "apiVersion: v1\nentries:\n  ingress-nginx:\n" + "".join(
            f"    - {{name: ingress-nginx, version: {v}}}\n" for v in ("4.10.1", "4.12.0", "4.12.3", "4.13.0-beta.0",
                                                                        "4.13.0")))
    env = {"HELM_REPOSITORY_CACHE": str(cache), "HELM_REPOSITORY_CONFIG": str(config / "repositories.yaml")}
    done = invoke("plan", "--target", "1.31", "--no-render", "--window", "1", "--diff", ".", cwd=root, env=env)
    assert "-    version: 4.10.1\n+    version: 4.12.3\n" in done.stdout
    assert done.returncode == 0, done.stderr  # the whole window, and so the hop too
    assert "-  version: v1.30.4+k3s1\n+  version: v1.31.14+k3s1\n" in done.stdout


def test_write_leaves_a_hard_linked_file_and_says_so(tmp_path):
    root = write_tree(tmp_path / "repo", STYLES)
    outside = tmp_path / "elsewhere.yaml"
    os.link(root / "apps/cilium.yaml", outside)
    done = invoke("plan", "--target", "1.31", "--no-render", "--window", "1", "--write", ".", cwd=root)
    assert done.returncode == 1
    assert "kubehop: notice: apps/cilium.yaml: has 2 hard links: not rewritten" in done.stderr
    assert "v1.16.5" in outside.read_text() and "v1.16.5" in (root / "apps/cilium.yaml").read_text()
    assert "~4.12.0" in (root / "apps/umbrella/Chart.yaml").read_text()  # the other files are written


def test_a_pin_in_a_file_outside_the_tree_is_left_to_a_person(tmp_path):
    root = write_tree(tmp_path / "repo", {k: v for k, v in STYLES.items() if k != "apps/cilium.yaml"})
    (tmp_path / "cilium.yaml").write_text(STYLES["apps/cilium.yaml"])
    (root / "apps/cilium.yaml").symlink_to(tmp_path / "cilium.yaml")
    done = invoke("plan", "--target", "1.31", "--no-render", "--window", "1", "--write", "apps", "cluster", "infra",
                  cwd=root)
    assert "v1.16.5" in (tmp_path / "cilium.yaml").read_text()
    assert done.returncode in (1, 3)


def test_a_hostile_file_name_is_quoted_as_git_quotes_it(tmp_path):
    name = "apps/odd\nname ##[x].yaml"
    root = tree(write_tree(tmp_path / "src", {"cluster/plans.yaml": STYLES["cluster/plans.yaml"],
                                              name: STYLES["apps/cilium.yaml"]}), tmp_path)
    done = invoke("plan", "--target", "1.31", "--window", "1", "--diff", ".", cwd=root)
    assert '--- "a/apps/odd\\nname ##\\133x].yaml"\n' in done.stdout
    (tmp_path / "w.diff").write_text(done.stdout)
    git(root, "apply", str(tmp_path / "w.diff"))
    assert "targetRevision: v1.17.0" in (root / name).read_text()


@pytest.mark.parametrize("args, message", [
    (("--diff",), "--diff and --write need --window N"),
    (("--window", "1", "--diff", "--write"), "give --diff or --write, not both"),
    (("--window", "9"), "the plan has 1 window(s): W1 to W1"),
])
def test_usage_errors(tmp_path, args, message):
    root = write_tree(tmp_path / "repo", STYLES)
    done = invoke("plan", "--target", "1.31", "--no-render", *args, ".", cwd=root)
    assert done.returncode == 2 and message in done.stderr


def test_the_pull_request_body(tmp_path, snapshot):
    root = tree(SEED, tmp_path)
    done = invoke("plan", "--from", "1.31", "--window", "1", "--format", "markdown", ".", cwd=root)
    assert done.returncode == 1
    assert done.stdout == snapshot


def test_diff_and_body_in_one_run(tmp_path):
    """What the GitHub Action runs: the diff on standard output, the body in --output-file."""
    root = tree(SEED, tmp_path)
    body = tmp_path / "body.md"
    done = invoke("plan", "--from", "1.31", "--window", "1", "--diff", "-o", "markdown", "--output-file", str(body),
                  ".", cwd=root)
    assert done.stdout.startswith("--- a/infra/ansible/roles/cilium/defaults/main.yml\n")
    assert body.read_text().startswith("## kubehop: W1 · Kubernetes 1.31 → 1.32 (k3s)\n")
    assert "deprecated" not in done.stderr


def test_the_body_to_a_file_named_by_o_as_before(tmp_path):
    """`-o FILE` named the body's file before -o was the format: it still writes there, with a warning."""
    root = tree(SEED, tmp_path)
    body = tmp_path / "body.md"
    done = invoke("plan", "--from", "1.31", "--window", "1", "--diff", "--format", "markdown", "-o", str(body),
                  ".", cwd=root)
    assert done.stdout.startswith("--- a/infra/ansible/roles/cilium/defaults/main.yml\n")
    assert body.read_text().startswith("## kubehop: W1 · Kubernetes 1.31 → 1.32 (k3s)\n")
    assert (f"kubehop: warning: --output FILE is deprecated: -o/--output names the format now; write "
            f"--output-file {body}") in done.stderr


def test_the_diff_and_two_reports_in_one_run(tmp_path):
    """What the GitHub Action runs: the diff, the body and the JSON the annotations are made from."""
    root = tree(SEED, tmp_path)
    done = invoke("plan", "--from", "1.31", "--window", "1", "--diff", "-o", "markdown", "--output-file",
                  str(tmp_path / "body.md"), "--report", f"json={tmp_path / 'w1.json'}", ".", cwd=root)
    assert done.stdout.startswith("--- a/infra/ansible/roles/cilium/defaults/main.yml\n")
    assert (tmp_path / "body.md").read_text().startswith("## kubehop: W1 · Kubernetes 1.31 → 1.32 (k3s)\n")
    assert json.loads((tmp_path / "w1.json").read_text()) == change_set(root, "--from", "1.31")


def test_the_change_set_as_yaml_is_its_json(tmp_path):
    import yaml

    root = tree(SEED, tmp_path)
    as_yaml = invoke("plan", "--from", "1.31", "--window", "1", "-o", "yaml", ".", cwd=root)
    assert as_yaml.returncode == 1, as_yaml.stderr
    assert yaml.safe_load(as_yaml.stdout) == change_set(root, "--from", "1.31")


def test_write_keeps_a_byte_order_mark_and_crlf_line_ends(tmp_path):
    root = write_tree(tmp_path / "repo", {"cluster/plans.yaml": STYLES["cluster/plans.yaml"]})
    (root / "apps").mkdir()
    (root / "apps/cilium.yaml").write_bytes(b"\xef\xbb\xbf" + STYLES["apps/cilium.yaml"].replace("\n", "\r\n").encode())
    done = invoke("plan", "--target", "1.31", "--no-render", "--window", "1", "--write", ".", cwd=root)
    assert done.returncode == 0, done.stderr
    written = (root / "apps/cilium.yaml").read_bytes()
    assert written == b"\xef\xbb\xbf" + STYLES["apps/cilium.yaml"].replace("v1.16.5", "v1.17.0").replace(
        "\n", "\r\n").encode()


def test_the_diff_of_a_file_with_a_byte_order_mark_applies(tmp_path):
    root = tree(write_tree(tmp_path / "src", {"cluster/plans.yaml": STYLES["cluster/plans.yaml"]}), tmp_path)
    (root / "infra").mkdir()
    (root / "infra/vars.yml").write_bytes(b"\xef\xbb\xbf" + STYLES["infra/vars.yml"].encode())
    git(root, "add", "-A")
    git(root, "commit", "-qm", "bom")
    done = invoke("plan", "--target", "1.31", "--no-render", "--window", "1", "--diff", ".", cwd=root)
    assert "@@ -1,4 +1,4 @@\n \ufeff---\n-kyverno_version: 'v1.12.5'\n" in done.stdout  # line 1 is context
    (tmp_path / "w.diff").write_text(done.stdout, encoding="utf-8")
    git(root, "apply", str(tmp_path / "w.diff"))
    assert (root / "infra/vars.yml").read_bytes().startswith(b"\xef\xbb\xbf---\nkyverno_version: 'v1.13.0'\n")


def test_a_move_across_minors_the_data_does_not_list_is_a_persons(tmp_path):
    """Cilium moves one minor at a time; 1.12 and 1.13 are not in the data: writing 1.14 would skip 1.13."""
    plans = STYLES["cluster/plans.yaml"].replace("v1.30.4+k3s1", "v1.26.4+k3s1")
    root = write_tree(tmp_path / "repo", {"cluster/plans.yaml": plans,
                                          "apps/cilium.yaml": STYLES["apps/cilium.yaml"].replace("v1.16.5", "1.12.0")})
    done = invoke("plan", "--target", "1.27", "--no-render", "--window", "1", "--diff", ".", cwd=root)
    assert done.returncode == 1 and done.stdout == ""
    assert ("cilium 1.12 → 1.14: Cilium moves one minor at a time and kubehop's data lists no release between 1.12 "
            "and 1.14: take each minor in turn by hand") in done.stderr


def test_pins_that_disagree_move_only_where_they_install_the_moves_start(tmp_path):
    """The plan starts from the oldest pin; a pin already past it is not moved back, nor skipped ahead."""
    files = dict(STYLES, **{"apps/cilium-bootstrap.yaml": STYLES["apps/cilium.yaml"].replace("v1.16.5", "1.17.1")
                            .replace("name: cilium\n", "name: cilium-bootstrap\n")})
    root = write_tree(tmp_path / "repo", files)
    done = invoke("plan", "--target", "1.31", "--no-render", "--window", "1", "--diff", ".", cwd=root)
    assert "+    targetRevision: v1.17.0   # pinned\n" in done.stdout  # 1.16.5 -> 1.17.0
    assert "cilium-bootstrap" not in done.stdout + done.stderr  # 1.17.1 installs 1.17 already


def test_a_fleet_gets_one_change_set_per_cluster(tmp_path):
    """A repository of several clusters: a pull request moves one (--cluster), and only its files."""
    files = {".kubehop.yaml": "clusters:\n  - {name: dev, paths: [dev]}\n  - {name: prod, paths: [prod]}\n"}
    for name, minor in (("dev", "v1.30.4+k3s1"), ("prod", "v1.29.9+k3s1")):
        files[f"{name}/plans.yaml"] = STYLES["cluster/plans.yaml"].replace("v1.30.4+k3s1", minor)
        files[f"{name}/cilium.yaml"] = STYLES["apps/cilium.yaml"]
    root = write_tree(tmp_path / "repo", files)
    refused = invoke("plan", "--target", "1.31", "--window", "1", ".", cwd=root)
    assert refused.returncode == 2 and "--window makes one cluster's change set" in refused.stderr
    done = invoke("plan", "--target", "1.31", "--cluster", "dev", "--window", "1", "--diff", ".", cwd=root)
    assert "--- a/dev/cilium.yaml\n" in done.stdout and "prod/" not in done.stdout


def test_a_hop_to_a_minor_the_data_has_no_release_of_is_a_persons(tmp_path):
    """No k3s 1.28 patch in rules/distro-releases.yaml (it lists K3s from 1.29): the Plan is left as it is
    and the step is listed, never written as a placeholder 'v1.28' that the upgrade controller would refuse."""
    plans = STYLES["cluster/plans.yaml"].replace("v1.30.4+k3s1", "v1.27.4+k3s1")
    root = write_tree(tmp_path / "repo", {"cluster/plans.yaml": plans})
    done = invoke("plan", "--target", "1.28", "--no-render", "--window", "1", "--diff", ".", cwd=root)
    assert done.returncode == 1 and "+  version:" not in done.stdout
    assert ("left to a person: upgrade orders for 1.28: the data knows no k3s release of 1.28" in done.stderr)
