"""Bad input never stops a scan: each problem is one clear line naming the file, the rest is scanned."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from conftest import run_kubehop

# A real blocker beside every bad file: proves the rest of the scan went on.
BLOCKER = """\
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: still-scanned
spec: {}
"""


def scan_tree(tmp_path: Path, name: str, content: bytes | str) -> tuple[object, str]:
    (tmp_path / "good.yaml").write_text(BLOCKER)
    bad = tmp_path / name
    bad.write_bytes(content.encode() if isinstance(content, str) else content)
    proc = run_kubehop("scan", "--target", "1.36", "--format", "json", str(tmp_path))
    assert "Traceback" not in proc.stderr.decode()
    import json

    report = json.loads(proc.stdout)
    assert [f["object"]["name"] for f in report["findings"]] == ["still-scanned"] or name == "good.yaml"
    return proc, report


def diagnostics_for(report: dict, name: str) -> list[dict]:
    return [d for d in report["diagnostics"] if d["file"].endswith(name)]


def test_malformed_yaml_names_file_and_line(tmp_path):
    proc, report = scan_tree(tmp_path, "broken.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n")
    [diag] = diagnostics_for(report, "broken.yaml")
    assert diag["message"].startswith("invalid YAML")
    assert diag["line"] == 4
    assert proc.returncode == 3


def test_one_broken_document_does_not_hide_the_others(tmp_path):
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: [oops\n---\n" + BLOCKER.replace("still-scanned", "second")
    (tmp_path / "multi.yaml").write_text(text)
    proc = run_kubehop("scan", "--format", "json", str(tmp_path / "multi.yaml"))
    import json

    report = json.loads(proc.stdout)
    assert [f["object"]["name"] for f in report["findings"]] == ["second"]
    assert report["findings"][0]["line"] == 5
    assert proc.returncode == 3


def test_duplicate_key_is_reported_and_object_still_checked(tmp_path):
    text = BLOCKER.replace("still-scanned", "dup") + "metadata:\n  name: dup\n"
    (tmp_path / "dup.yaml").write_text(text)
    proc = run_kubehop("scan", "--format", "json", str(tmp_path))
    import json

    report = json.loads(proc.stdout)
    [diag] = report["diagnostics"]
    assert "duplicate key 'metadata'" in diag["message"] and diag["line"] == 6
    assert [f["object"]["name"] for f in report["findings"]] == ["dup"]


def test_unknown_tags_are_read_as_plain_values(tmp_path):
    text = BLOCKER.replace("spec: {}", "spec:\n  backend: !Ref MyService\n  tls: !env_var [A, B]")
    proc, report = scan_tree(tmp_path, "good.yaml", text)
    messages = [d["message"] for d in report["diagnostics"]]
    assert any("unknown YAML tag !Ref" in m for m in messages)
    assert any("unknown YAML tag !env_var" in m for m in messages)
    # The objects were read (and checked): a notice, not unreadable input.
    assert {d["level"] for d in report["diagnostics"]} == {"notice"}
    assert proc.returncode == 1


def test_envsubst_placeholders(tmp_path):
    text = "apiVersion: ${API_VERSION}\nkind: Deployment\nmetadata:\n  name: x\n"
    proc, report = scan_tree(tmp_path, "subst.yaml", text)
    [diag] = diagnostics_for(report, "subst.yaml")
    assert "substitution placeholder" in diag["message"] and diag["level"] == "notice"
    assert proc.returncode == 1  # a notice is not an unreadable input


def test_placeholders_in_values_are_fine(tmp_path):
    proc, report = scan_tree(tmp_path, "vals.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                                   "  name: ${NAME}\ndata:\n  replicas: ${REPLICAS:=3}\n")
    assert diagnostics_for(report, "vals.yaml") == []


def test_binary_file(tmp_path):
    proc, report = scan_tree(tmp_path, "blob.yaml", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    [diag] = diagnostics_for(report, "blob.yaml")
    assert "binary" in diag["message"]
    assert proc.returncode == 3


def test_non_utf8_text(tmp_path):
    proc, report = scan_tree(tmp_path, "latin1.yaml", "apiVersion: v1\nkind: ConfigMap\n# caf\xe9\n".encode("latin-1"))
    [diag] = diagnostics_for(report, "latin1.yaml")
    assert "not UTF-8" in diag["message"] and diag["line"] == 3


def test_empty_file_is_a_notice(tmp_path):
    proc, report = scan_tree(tmp_path, "empty.yaml", "")
    [diag] = diagnostics_for(report, "empty.yaml")
    assert diag["message"] == "empty file" and diag["level"] == "notice"
    assert proc.returncode == 1


def test_huge_file_is_skipped(tmp_path):
    line = "# " + "x" * 1000 + "\n"
    proc, report = scan_tree(tmp_path, "huge.yaml", line * 51_000)
    [diag] = diagnostics_for(report, "huge.yaml")
    assert "over the 20 MiB limit" in diag["message"]


def test_a_file_that_grows_while_it_is_read_is_read_to_its_end_or_its_limit(tmp_path, monkeypatch):
    """The file is read by the size it had when opened, and on where it has grown since: what it holds
    then is read whole, up to the limit, never cut at its old size."""
    import os as os_module

    from scanner.sources.files import walk

    grown = tmp_path / "grown.yaml"
    grown.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: grown}\n")
    real_fstat = os_module.fstat

    def smaller(fd):  # as if the file had been 10 bytes when opened
        info = real_fstat(fd)
        return os_module.stat_result((info.st_mode, *tuple(info)[1:6], 10, *tuple(info)[7:]))

    monkeypatch.setattr(walk.os, "fstat", smaller)
    text, problem = walk.read_file(str(grown))
    assert problem is None and text.endswith("{name: grown}\n")
    monkeypatch.setattr(walk, "MAX_FILE_BYTES", 20)
    text, problem = walk.read_file(str(grown))
    assert text is None and "over the" in problem.message


def test_billion_laughs(tmp_path):
    lines = ["apiVersion: v1", "kind: ConfigMap", "metadata: {name: lol}", "data:", '  a0: &a0 ["lol"]']
    for i in range(1, 12):
        lines.append(f"  a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]")
    proc, report = scan_tree(tmp_path, "bomb.yaml", "\n".join(lines) + "\n")
    [diag] = diagnostics_for(report, "bomb.yaml")
    assert "alias bomb" in diag["message"]


def test_small_aliases_are_fine(tmp_path):
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: a}\ndata:\n  x: &v hello\n  y: *v\n"
    proc, report = scan_tree(tmp_path, "alias.yaml", text)
    assert diagnostics_for(report, "alias.yaml") == []


def test_a_redefined_anchor_is_valid_yaml(tmp_path):
    # YAML 1.2 and go-yaml (what the API server and Flux parse with) let `&name` be defined again;
    # each alias means the definition before it. PyYAML alone refuses it ("found duplicate anchor").
    text = BLOCKER.replace("spec: {}", "spec:\n  rules:\n    - host: &h one.example\n    - host: *h\n"
                                        "    - host: &h two.example\n    - host: *h\n")
    (tmp_path / "good.yaml").write_text(text)
    proc = run_kubehop("scan", "--target", "1.36", "--format", "json", str(tmp_path))
    import json

    report = json.loads(proc.stdout)
    assert report["diagnostics"] == []
    [finding] = report["findings"]
    assert finding["object"]["name"] == "still-scanned" and finding["line"] == 1
    assert proc.returncode == 1

    from scanner.sources.yaml.yamldoc import read_text

    [manifest], problems = read_text(text, "good.yaml")
    assert problems == []
    assert [rule["host"] for rule in manifest.body["spec"]["rules"]] == [
        "one.example", "one.example", "two.example", "two.example"]


def test_a_redefined_anchor_beside_template_text_in_a_value_is_read(tmp_path):
    """A HelmRelease whose Alertmanager values hold `{{ .Value }}` strings and a redefined `&host` (as in
    toboshii/home-ops) was set aside as "Helm template syntax": its chart pin and its objects went unseen."""
    text = (
        "apiVersion: helm.toolkit.fluxcd.io/v2beta1\nkind: HelmRelease\nmetadata:\n  name: kps\n"
        "  namespace: monitoring\nspec:\n  chart:\n    spec:\n      chart: kube-prometheus-stack\n"
        "      version: 45.0.0\n  values:\n    alertmanager:\n      config:\n"
        "        text: '{{ range .Labels.SortedPairs }} {{ .Name }} {{ end }}'\n"
        "      ingress:\n        hosts: [&host alert.example]\n        tls: [{hosts: [*host]}]\n"
        "    prometheus:\n      ingress:\n        hosts: [&host prom.example]\n        tls: [{hosts: [*host]}]\n")
    (tmp_path / "helm-release.yaml").write_text(text)
    proc = run_kubehop("components", "--format", "json", str(tmp_path))
    import json

    [pin] = json.loads(proc.stdout)["components"]
    assert (pin["component"], pin["pin"], pin["line"]) == ("kube-prometheus-stack", "45.0.0", 10)
    proc = run_kubehop("scan", "--target", "1.36", "--format", "json", str(tmp_path))
    report = json.loads(proc.stdout)
    assert report["diagnostics"] == [] and not any("template" in u["reason"] for u in report["unrendered"])
    assert report["summary"]["objects"] == 1


@pytest.mark.parametrize("style", ["flow", "block"])
def test_ten_thousand_deep_nesting(tmp_path, style):
    depth = 10_000
    if style == "flow":
        body = "[" * depth + "]" * depth
    else:
        body = "\n  " + "- " * depth + "leaf\n"  # compact block sequences, one per "- "
    proc, report = scan_tree(tmp_path, "deep.yaml", "apiVersion: v1\nkind: ConfigMap\ndata: " + body)
    # kubehop's own depth check or libyaml's limit (newer builds have one) may stop first: the
    # wording, the exit code and the rest of the scan are kubehop's either way.
    [diag] = diagnostics_for(report, "deep.yaml")
    assert "nesting deeper than" in diag["message"]
    assert proc.returncode == 3


def test_flow_nesting_deep_enough_to_crash_libyaml(tmp_path):
    depth = 200_000
    proc, report = scan_tree(tmp_path, "deeper.yaml", "a: " + "[" * depth + "]" * depth)
    [diag] = diagnostics_for(report, "deeper.yaml")
    assert "nesting deeper than" in diag["message"]


def test_unreadable_file(tmp_path):
    import shutil

    (tmp_path / "good.yaml").write_text(BLOCKER)
    secret = tmp_path / "secret.yaml"
    secret.write_text("apiVersion: v1\nkind: Secret\n")
    secret.chmod(0)
    # root reads everything: drop the capabilities that let it, as an unprivileged CI runner would be.
    prefix: list[str] = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv to drop file-permission capabilities")
        prefix = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
    import subprocess

    from conftest import REPO

    proc = subprocess.run([*prefix, sys.executable, "-m", "scanner", "scan", str(tmp_path)], capture_output=True,
                          env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"})
    out = proc.stdout.decode()
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    assert "secret.yaml: cannot read: Permission denied" in out
    assert "still-scanned" in out
    assert proc.returncode == 3


def test_symlink_loop_and_escape(tmp_path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "good.yaml").write_text(BLOCKER)
    (tree / "loop.yaml").symlink_to(tree / "loop.yaml")
    outside = tmp_path / "outside.yaml"
    outside.write_text(BLOCKER.replace("still-scanned", "outside"))
    (tree / "escape.yaml").symlink_to(outside)
    (tree / "dirloop").symlink_to(tree)
    proc = run_kubehop("scan", "--format", "json", str(tree))
    import json

    report = json.loads(proc.stdout)
    messages = {Path(d["file"]).name: d["message"] for d in report["diagnostics"]}
    assert messages["loop.yaml"] == "symbolic link loop"
    assert "outside the scanned tree" in messages["escape.yaml"]
    assert [f["object"]["name"] for f in report["findings"]] == ["still-scanned"]
    assert proc.returncode == 3


def test_a_link_to_a_file_of_the_tree_is_read_once(tmp_path):
    (tmp_path / "base").mkdir()
    (tmp_path / "prod").mkdir()
    (tmp_path / "vendor").mkdir()
    (tmp_path / "vendor" / "shared.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: vendored}\n")
    (tmp_path / "prod" / "shared.yaml").symlink_to(tmp_path / "vendor" / "shared.yaml")
    (tmp_path / "prod" / "good.yaml").symlink_to(tmp_path / "good.yaml")
    proc, report = scan_tree(tmp_path, "base/other.yaml", "a: b\n")
    assert proc.returncode == 1
    # good.yaml once, at itself; the vendored file (its folder is not walked) through its link
    assert report["summary"]["objects"] == 2


def test_missing_path(tmp_path):
    proc = run_kubehop("scan", str(tmp_path / "nope"))
    out = proc.stdout.decode()
    assert f"{tmp_path / 'nope'}: does not exist" in out
    from scanner.rulebook import load_rulebook

    newest = load_rulebook().newest
    assert out.splitlines()[-1].startswith(f"nothing checked for {newest}: {tmp_path / 'nope'} does not exist (")
    assert "nothing blocks" not in out
    assert proc.returncode == 3


def test_helmrelease_with_malformed_spec(tmp_path):
    """A HelmRelease whose valuesFrom is not a list is read like one without any."""
    proc, _ = scan_tree(tmp_path, "release.yaml", """\
apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: r, namespace: apps}
spec:
  chart: {spec: {chart: ./nowhere, sourceRef: {kind: GitRepository, name: repo}}}
  valuesFrom: 5
""")
    assert proc.returncode == 1


def test_tags_and_duplicates_outside_kubernetes_objects_are_not_reported(tmp_path):
    # Helm 2 requirements files and CI configs may hold what Kubernetes would refuse: not ours to judge.
    proc, report = scan_tree(tmp_path, "requirements.yaml",
                             "dependencies:\n- name: redis\n  condition: !redis.emulate\n  name: again\n")
    assert diagnostics_for(report, "requirements.yaml") == []
    assert proc.returncode == 1


def test_a_broken_link_that_names_no_manifest_is_a_notice_not_an_input_problem(tmp_path):
    """redhat-cop/gitops-catalog: links to operator folders that were removed made every scan exit 3."""
    (tmp_path / "good.yaml").write_text(BLOCKER)
    (tmp_path / "old-operator").symlink_to(tmp_path / "removed-operator")
    proc = run_kubehop("scan", "--format", "json", str(tmp_path))
    import json

    report = json.loads(proc.stdout)
    assert [(Path(d["file"]).name, d["level"]) for d in report["diagnostics"]] == [("old-operator", "notice")]
    assert [f["object"]["name"] for f in report["findings"]] == ["still-scanned"]
    assert proc.returncode == 1
    (tmp_path / "gone.yaml").symlink_to(tmp_path / "removed.yaml")  # a manifest that cannot be read: exit 3
    proc = run_kubehop("scan", "--format", "json", str(tmp_path))
    assert {Path(d["file"]).name: d["level"] for d in json.loads(proc.stdout)["diagnostics"]}["gone.yaml"] == "error"
    assert proc.returncode == 3


def test_jsonc_settings_beside_the_manifests_are_not_input_problems(tmp_path):
    """allenporter/k8s-gitops, mmalyska/home-ops (.devcontainer/devcontainer.json), theepicsaxguy/homelab
    (website/tsconfig.json): JSON with comments and trailing commas, no manifest, made the scan exit 3."""
    (tmp_path / ".devcontainer").mkdir()
    (tmp_path / ".devcontainer" / "devcontainer.json").write_text(
        '{\n  // the image\n  "image": "mcr.microsoft.com/devcontainers/base", /* pinned */\n'
        '  "mounts": ["source=//var/run,target=/x"],\n}\n')
    proc, report = scan_tree(tmp_path, "tsconfig.json", '{\n  // editor only\n  "extends": "@x/tsconfig",\n}\n')
    assert report["diagnostics"] == []
    assert proc.returncode == 1  # good.yaml's blocker


def test_a_manifest_in_jsonc_is_still_invalid_input(tmp_path):
    """kubectl refuses a comment in a JSON manifest too: that file stays an input problem."""
    proc, report = scan_tree(tmp_path, "cm.json",
                             '{\n  // a config map\n  "apiVersion": "v1", "kind": "ConfigMap",\n'
                             '  "metadata": {"name": "x"},\n}\n')
    [diag] = diagnostics_for(report, "cm.json")
    assert diag["message"].startswith("invalid YAML") and diag["level"] == "error"
    assert proc.returncode == 3
