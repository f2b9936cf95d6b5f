"""`kubehop plan`, `components` and `inventory` on a tree pinned like seed 002 (§1.2), as a user runs them.

The windows follow the sourced data in compat-matrix/ and rules/; where that data disagrees with
the seed's hand-written table (§4.2), these tests follow the data.
"""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURES, REPO, run_kubehop, tool_or_skip

SEED = "tests/fixtures/seed002"
DATA = REPO / "compat-matrix"

needs_data = pytest.mark.skipif(not any(DATA.glob("*.yaml")),
                                reason="compat-matrix/ holds no component yet (it comes from the compat-data branch)")


def plan_json(*args: str) -> dict:
    proc = run_kubehop("plan", "--format", "json", *args)
    assert "Traceback" not in proc.stderr.decode(), proc.stderr.decode()
    assert proc.returncode in (0, 1), proc.stderr.decode()
    return json.loads(proc.stdout)


def moves(window: dict, component: str) -> list[tuple[str, str]]:
    return [(s["from"], s["to"]) for s in window["before"] if s["component"] == component]


@needs_data
@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_seed_plan_in_every_format(fmt, snapshot):
    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.36", "--format", fmt, SEED)
    assert "Traceback" not in proc.stderr.decode()
    assert proc.stdout.decode() == snapshot


@needs_data
def test_seed_plan_steps_each_one_minor_component_one_release_at_a_time():
    plan = plan_json("--from", "1.31", "--target", "1.36", SEED)
    assert [w["to"] for w in plan["windows"]] == ["1.32", "1.33", "1.34", "1.35", "1.36"]
    for window in plan["windows"]:
        for component in ("cilium", "longhorn"):
            steps = moves(window, component)
            # a chain: each step starts where the previous one ended
            assert all(a[1] == b[0] for a, b in zip(steps, steps[1:]))
    cilium = [moves(w, "cilium") for w in plan["windows"]]
    assert cilium[:3] == [[("1.16", "1.17")], [("1.17", "1.18")], [("1.18", "1.19")]]
    longhorn = [step for w in plan["windows"] for step in moves(w, "longhorn")]
    assert longhorn[0][0] == "1.7.3"  # the newest patch ">=1.7.0 <1.8.0" admits: the seed's live 1.7.3
    # one minor at a time; a patch that restates the range (1.7.3, 1.11.3) is a step of its own
    minors = [int(step[1].split(".")[1]) for step in longhorn]
    assert all(b - a in (0, 1) for a, b in zip([7] + minors, minors))
    assert set(range(8, minors[-1] + 1)) <= set(minors)


@needs_data
def test_seed_plan_migrates_flux_image_v1beta2_before_the_flux_release_that_drops_it():
    plan = plan_json("--from", "1.31", "--target", "1.36", SEED)
    migrations = [(w["to"], m) for w in plan["windows"] for m in w["migrations"]
                  if m["apiVersion"] == "image.toolkit.fluxcd.io/v1beta2"]
    assert {m["kind"] for _, m in migrations} == {"ImageRepository", "ImagePolicy", "ImageUpdateAutomation"}
    for hop, migration in migrations:
        [window] = [w for w in plan["windows"] if w["to"] == hop]
        removed = migration["removed_in"].split()[1]
        assert any(s["component"] == "flux" and s["to"] == removed for s in window["before"])
        assert all(o["file"].startswith(f"{SEED}/platform/image-automation/") for o in migration["objects"])


@needs_data
def test_components_of_the_seed_tree(snapshot):
    proc = run_kubehop("components", SEED)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode() == snapshot


@needs_data
def test_components_json_names_every_pin_of_seed_table(snapshot):
    proc = run_kubehop("components", "--format", "json", SEED)
    document = json.loads(proc.stdout)
    assert document == snapshot
    found = {c["component"] for c in document["components"]}
    assert {"cilium", "longhorn", "cert-manager", "flux", "kyverno", "velero", "kubevirt"} <= found


def test_inventory_of_the_seed_tree(snapshot):
    proc = run_kubehop("inventory", SEED)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode() == snapshot


def test_inventory_json_counts_objects_and_marks_crds():
    uses = json.loads(run_kubehop("inventory", "--format", "json", SEED).stdout)
    by_api = {(u["apiVersion"], u["kind"]): u for u in uses}
    assert by_api[("apps/v1", "Deployment")]["objects"] == 7
    assert by_api[("image.toolkit.fluxcd.io/v1beta2", "ImagePolicy")]["served"] == "CRD"
    assert by_api[("networking.k8s.io/v1", "NetworkPolicy")]["served"] == "every known minor"


def test_inventory_names_the_minors_that_serve_a_removed_api():
    uses = json.loads(run_kubehop("inventory", "--format", "json", "examples/").stdout)
    served = {(u["apiVersion"], u["kind"]): u["served"] for u in uses}
    assert served[("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema")] == "1.26–1.31"
    assert served[("batch/v1beta1", "CronJob")] == "until 1.24"


def test_plan_reads_the_cluster_version_from_the_tree_and_says_where():
    plan = plan_json("--target", "1.33", SEED)
    assert plan["from"] == "1.31"
    assert plan["from_source"]["file"] == f"{SEED}/infra/ansible/roles/k3s_server/defaults/main.yml"
    assert plan["from_source"]["line"] == 3
    assert plan["distro"] == "k3s"


def test_plan_reads_the_cluster_version_from_kubectl_version_json(tmp_path):
    (tmp_path / "version.json").write_text(json.dumps({"serverVersion": {"gitVersion": "v1.33.2"}}))
    (tmp_path / "tree").mkdir()
    plan = plan_json("--target", "1.35", "--cluster-version-file", str(tmp_path / "version.json"),
                     str(tmp_path / "tree"))
    assert (plan["from"], plan["distro"], [w["to"] for w in plan["windows"]]) == ("1.33", "kubernetes",
                                                                                  ["1.34", "1.35"])


def test_plan_without_from_on_a_tree_that_pins_no_version_is_a_usage_error(tmp_path):
    proc = run_kubehop("plan", "--target", "1.36", str(tmp_path))
    assert proc.returncode == 2
    assert "give --from" in proc.stderr.decode() and "Traceback" not in proc.stderr.decode()


def test_plan_refuses_an_unknown_distribution(tmp_path):
    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.32", "--distro", "minikube", str(tmp_path))
    assert proc.returncode == 2 and "known distributions" in proc.stderr.decode()


def test_plan_on_unreadable_input_still_plans_and_exits_3(tmp_path):
    (tmp_path / "bad.yaml").write_bytes(b"\xff\xfe\x00binary")
    (tmp_path / "k3s.yml").write_text("k3s_version: v1.34.1+k3s1\n")
    proc = run_kubehop("plan", "--target", "1.35", str(tmp_path))
    assert proc.returncode == 3
    assert "Kubernetes 1.34 → 1.35 (k3s)" in proc.stdout.decode()
    assert "bad.yaml" in proc.stderr.decode()


def test_plan_output_is_deterministic():
    first = run_kubehop("plan", "--from", "1.31", "--format", "json", SEED).stdout
    assert first == run_kubehop("plan", "--from", "1.31", "--format", "json", SEED).stdout


def test_fixture_tree_exists():
    assert (FIXTURES / "seed002" / "platform" / "cilium" / "helmrelease.yaml").is_file()


@needs_data
def test_seed_plan_where_each_component_ends_and_what_blocks_follow_the_data():
    plan = plan_json("--from", "1.31", "--target", "1.36", SEED)
    ends = {c["name"]: c["end"] for c in plan["components"]}
    # As seed 002 §4.2 has it: cert-manager 1.21, CNPG 1.30, Flux past the v1beta2 removal. Longhorn
    # ends at 1.11.3, not the seed's 1.12: the data names patches that restate a range, and Longhorn's
    # 1.11.3 docs test 1.34-1.36 (compat-matrix/longhorn.yaml), so the oldest release running on 1.36
    # is that patch. The plan names the patch before each hop (1.7 -> 1.7.3 for 1.32, ...).
    assert {name: ends[name] for name in ("longhorn", "cert-manager", "cloudnative-pg", "flux")} == {
        "longhorn": "1.11.3", "cert-manager": "1.21", "cloudnative-pg": "1.30", "flux": "2.9"}
    # Where the data states no range, the plan says so instead of assuming the seed's guess: Cilium
    # 1.20 and Kyverno 1.19 state no range, so the hop to 1.36 is unverified for them (a warning,
    # not a blocker: such releases do run there), and the plan moves them to those releases.
    assert (ends["cilium"], ends["kyverno"]) == ("1.20", "1.19")
    unverified = {(w["to"], p["component"]) for w in plan["windows"] for p in w["problems"]
                  if p["severity"] == "unknown" and "unverified" in p["message"]}
    assert {("1.36", "cilium"), ("1.36", "kyverno"), ("1.32", "loki")} <= unverified
    # Velero states "1.18-latest": open-ended, read when 1.36 was the newest minor, so every hop up to
    # 1.36 is supported for it, not unverified.
    assert not {hop for hop in unverified if hop[1] == "velero"}
    # A pinned release whose stated range stops below a hop blocks that hop at its pin, with the move.
    blockers = {(w["to"], p["component"]) for w in plan["windows"] for p in w["problems"] if p["severity"] == "blocker"}
    # Ranges run their newest release (the seed's live Longhorn 1.7.3 and CNPG chart 0.29.0, operator
    # 1.30): Longhorn 1.7.3 runs on 1.32 and stops at 1.33; CNPG 1.30 is outside its stated range (warnings).
    assert blockers == {("1.32", "cilium"), ("1.32", "flux"), ("1.32", "kyverno"),
                        ("1.33", "longhorn"), ("1.33", "cert-manager"), ("1.33", "external-dns")}


@pytest.mark.parametrize("args, said", [
    (("--from", "1.33", "--target", "1.33"), "--target 1.33 is not newer"),
    (("--target", "1.31"), "v1.31.5+k3s1 at tests/fixtures/seed002/infra/ansible/roles/k3s_server/defaults/main.yml:3"),
])
def test_plan_needs_a_target_newer_than_the_cluster(args, said):
    proc = run_kubehop("plan", *args, SEED)
    assert proc.returncode == 2
    assert said in proc.stderr.decode() and "Traceback" not in proc.stderr.decode()


def test_a_version_file_that_is_not_kubectl_output_is_a_usage_error(tmp_path):
    (tmp_path / "version.json").write_text('{"clientVersion": {"gitVersion": "v1.34.0"}}')
    proc = run_kubehop("plan", "--target", "1.36", "--cluster-version-file", str(tmp_path / "version.json"),
                       str(tmp_path))
    assert proc.returncode == 2 and "no serverVersion.gitVersion" in proc.stderr.decode()


def test_core_api_blockers_sit_in_the_window_of_their_hop():
    plan = plan_json("--from", "1.29", "--target", "1.33", "examples/")
    rules = {w["to"]: sorted(b["rule"].split("/")[0] for b in w["api_blockers"]) for w in plan["windows"]}
    # Already gone at 1.29 (removed in 1.22-1.26): fix before the first hop. "field": the v1beta3
    # PriorityLevelConfiguration still spells assuredConcurrencyShares, unknown in v1beta3 (from 1.26).
    assert rules["1.30"] == ["autoscaling", "batch", "field", "networking.k8s.io", "policy"]
    assert rules["1.32"] == ["flowcontrol.apiserver.k8s.io", "flowcontrol.apiserver.k8s.io"]
    assert rules["1.31"] == rules["1.33"] == []
    # and the components the examples pin whose stated ranges stop below a hop, at their pins
    components = {w["to"]: [p["component"] for p in w["problems"] if p["severity"] == "blocker"]
                  for w in plan["windows"]}
    assert components == {"1.30": [], "1.31": ["cilium"], "1.32": ["flux"], "1.33": ["cert-manager"]}
    assert plan["blockers"] == 7 + 3


def test_plan_output_to_a_missing_folder_is_a_usage_error_before_planning(tmp_path):
    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.32", "--output-file", str(tmp_path / "nope" / "plan.txt"),
                       str(tmp_path))
    assert proc.returncode == 2 and "does not exist" in proc.stderr.decode()
    assert "Traceback" not in proc.stderr.decode()


@needs_data
def test_plan_reports_beside_the_output_are_the_same_plan(tmp_path):
    """--report FORMAT=FILE, as scan's: each format of the one plan, the one printed too."""
    import yaml

    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.36", "-o", "json", "--report",
                       f"yaml={tmp_path / 'plan.yaml'}", "--report", f"markdown={tmp_path / 'plan.md'}", SEED)
    assert proc.returncode == 1, proc.stderr.decode()
    assert yaml.safe_load((tmp_path / "plan.yaml").read_text()) == json.loads(proc.stdout)
    assert (tmp_path / "plan.md").read_text() == run_kubehop("plan", "--from", "1.31", "--target", "1.36", "-o",
                                                             "markdown", SEED).stdout.decode()
    wrong = run_kubehop("plan", "--report", f"sarif={tmp_path / 'x'}", SEED)
    assert wrong.returncode == 2 and "format must be one of text, json, yaml, markdown" in wrong.stderr.decode()


def test_plan_of_a_path_that_does_not_exist_says_so(tmp_path):
    """Not that the tree pins no cluster version (issue 26: a wrong path in a job must say so)."""
    proc = run_kubehop("plan", "--target", "1.36", str(tmp_path / "kubernetes"))
    assert proc.returncode == 2 and f"Error: {tmp_path / 'kubernetes'} does not exist" in proc.stderr.decode()


def test_plan_renders_charts_for_its_target_not_the_newest_minor(tmp_path):
    tool_or_skip("helm")
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: nightly\nversion: 0.1.0\n")
    (chart / "templates" / "cron.yaml").write_text(
        '{{- if semverCompare "<1.30-0" .Capabilities.KubeVersion.Version }}\n'
        "apiVersion: batch/v1beta1\n{{- else }}\napiVersion: batch/v1\n{{- end }}\n"
        "kind: CronJob\nmetadata:\n  name: nightly\n")
    plan = plan_json("--from", "1.24", "--target", "1.26", str(tmp_path))
    blockers = {w["to"]: [b["rule"] for b in w["api_blockers"]] for w in plan["windows"]}
    assert blockers == {"1.25": ["batch/v1beta1/CronJob"], "1.26": []}


def test_plan_takes_target_and_from_from_the_configuration_like_scan(tmp_path):
    (tmp_path / ".kubehop.yaml").write_text('target: "1.33"\nfrom: "1.31"\n')
    plan = plan_json(str(tmp_path))
    assert (plan["from"], plan["target"]) == ("1.31", "1.33")
    plan = plan_json("--no-config", "--from", "1.34", "--target", "1.35", str(tmp_path))
    assert (plan["from"], plan["target"]) == ("1.34", "1.35")


def test_plan_markdown_escapes_object_names_from_the_tree(tmp_path):
    (tmp_path / "ingress.yaml").write_text(
        "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n"
        "  name: '[x](https://example.com) @everyone'\n  namespace: web\n")
    proc = run_kubehop("plan", "--from", "1.21", "--target", "1.22", "--format", "markdown", str(tmp_path))
    out = proc.stdout.decode()
    assert proc.returncode == 1, proc.stderr.decode()
    assert "Ingress web/\\[x\\](https\\://example.com) @\u2060everyone" in out  # no link, no mention
    assert "[x](https://example.com)" not in out


def test_plan_says_when_charts_were_read_as_text(tmp_path):
    proc = run_kubehop("plan", "--from", "1.31", "--target", "1.32", str(FIXTURES / "charts" / "version-switch"),
                       env={"KUBEHOP_HELM": "", "KUBEHOP_CACHE_DIR": str(tmp_path)})
    assert "kubehop: notice: helm was not found" in proc.stderr.decode()
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr.decode()
