"""The lockstep planner on small synthetic catalogs: every rule of the plan, one at a time."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from catalogs import catalog, component, crd_rules, gitops, mesh, release, store
from scanner.components.pins import Detection, by_component
from scanner.components.state import resolve
from scanner.model import Manifest, Origin
from scanner.components.state import BLOCKED, UNKNOWN_SUPPORT, UNSUPPORTED, UNVERIFIED
from scanner.plan import BLOCKER, UNKNOWN, WARNING, build_plan, component_states
from scanner.versions import Minor


def m(text: str) -> Minor:
    major, minor = text.split(".")
    return Minor(int(major), int(minor))


def pinned(book, name: str, pin: str, chart: bool = True, source: str = "chart", line: int = 3) -> Detection:
    component_ = book.components[name]
    return Detection(name, pin, component_.releases_admitted(pin, chart) or (),
                     Origin(f"{name}.yaml", line, 16), source, f"HelmRelease {name}")


def plan_for(book, detections: list[Detection], current: str, target: str, **kwargs):
    return build_plan(component_states(by_component(detections), book), m(current), m(target), book, **kwargs)


def moves(window, where="before") -> list[str]:
    return [s.label for s in getattr(window, where)]


def test_a_one_minor_component_moves_in_lockstep_with_each_hop():
    book = catalog([mesh()])
    plan = plan_for(book, [pinned(book, "mesh", "1.16.5")], "1.31", "1.35")
    assert [moves(w) for w in plan.windows] == [
        ["mesh 1.16 → 1.17"], ["mesh 1.17 → 1.18"], ["mesh 1.18 → 1.19"], []]
    assert plan.components[0].final.version == "1.19"
    # The pinned 1.16 does not run on 1.32: the tree must change before that hop (one blocker, at the pin).
    [problem] = [p for p in plan.windows[0].problems if p.severity == BLOCKER]
    assert (problem.severity, problem.kind, problem.minor) == (BLOCKER, UNSUPPORTED, m("1.32"))
    assert problem.message == "Mesh 1.16 supports Kubernetes 1.27–1.30, not 1.32"
    assert problem.text == ("Mesh 1.16 supports Kubernetes 1.27–1.30, not 1.32; move it to 1.17 before the hop "
                            "to 1.32 (it supports 1.29–1.32)")
    assert problem.fix == ("before the hop to 1.32: mesh 1.16 → 1.17", "before the hop to 1.33: mesh 1.17 → 1.18",
                           "before the hop to 1.34: mesh 1.18 → 1.19")
    assert plan.blocker_count == 1
    [finding] = [f for f in plan.findings if f.severity == "error"]
    assert (finding.rule_id, finding.severity, finding.origin.line, finding.support) == (
        "component/mesh/unsupported", "error", 3, "unsupported")


def test_each_step_of_a_chain_is_listed_with_the_pin_to_edit():
    book = catalog([store()])
    plan = plan_for(book, [pinned(book, "store", ">=5.0.0 <6.0.0", line=20)], "1.31", "1.32")
    assert moves(plan.windows[0]) == ["store 1.7 → 1.8", "store 1.8 → 1.9"]
    assert {s.pins for s in plan.windows[0].before} == {(Origin("store.yaml", 20, 16),)}
    assert "one minor at a time" in plan.windows[0].before[0].why


def test_a_component_that_may_skip_minors_jumps_to_the_oldest_release_that_runs_on_the_hop():
    book = catalog([gitops()])
    plan = plan_for(book, [pinned(book, "gitops", "2.4.0")], "1.31", "1.33")
    assert [moves(w) for w in plan.windows] == [["gitops 2.4 → 2.5"], ["gitops 2.5 → 2.6"]]


def test_a_stated_maximum_below_the_hop_blocks_and_a_newer_release_without_a_range_is_unverified():
    book = catalog([mesh()])
    plan = plan_for(book, [pinned(book, "mesh", "1.19.0")], "1.35", "1.36")
    assert moves(plan.windows[0]) == ["mesh 1.19 → 1.20"]
    blocker, unverified = plan.windows[0].problems
    assert (blocker.severity, blocker.kind) == (BLOCKER, UNSUPPORTED)
    assert "move it to 1.20 before the hop to 1.36 (it states no range for 1.36: unverified)" == blocker.advice
    assert (unverified.severity, unverified.kind) == (UNKNOWN, UNVERIFIED)
    assert "Mesh 1.20: no release states support for Kubernetes 1.36" in unverified.message
    assert plan.blocker_count == 1 and plan.warning_count == 1


def test_no_release_that_may_run_on_the_hop_is_a_blocker_with_the_evidence():
    book = catalog([component("old", [release("1.0", "1.28", "1.31"), release("1.1", "1.29", "1.35",
                                                                              released="2025-02")])])
    plan = plan_for(book, [pinned(book, "old", "1.1.0")], "1.35", "1.36")
    [problem] = plan.windows[0].problems
    assert (problem.severity, problem.kind) == (BLOCKER, BLOCKED)
    # (1.1 is the newest release kubehop knows: nothing more to say of newer ones)
    assert problem.message == "no known release of Old supports Kubernetes 1.36: 1.1 supports 1.29–1.35"


def test_unknown_support_moves_to_the_oldest_release_that_states_it_and_says_why():
    book = catalog([component("gitflow", [release("2.1", "1.25", None), release("2.2", "1.26", None),
                                          release("2.3", "1.28", "1.30")], one_minor=False)])
    plan = plan_for(book, [pinned(book, "gitflow", "2.1.2")], "1.28", "1.29")
    [step] = plan.windows[0].before
    assert step.label == "gitflow 2.1 → 2.3"
    assert step.why == "2.1 does not state support for 1.29; 2.3 is the oldest release that does (1.28–1.30)"
    [problem] = plan.windows[0].problems
    assert (problem.severity, problem.kind, problem.support) == (UNKNOWN, UNKNOWN_SUPPORT, "unknown")
    assert not plan.blocked and plan.warning_count == 1


def test_unknown_policy_block_makes_an_unverified_hop_a_blocker_and_ignore_drops_it():
    book = catalog([component("logs", [release("3.0", None, None)])])
    states = lambda: component_states(by_component([pinned(book, "logs", "3.0.1")]), book)
    for unknown, blockers, warnings in (("warn", 0, 1), ("block", 1, 0), ("ignore", 0, 0)):
        timeline = resolve(states(), m("1.31"), m("1.33"), book, unknown=unknown)
        plan = build_plan(timeline.states, m("1.31"), m("1.33"), book, timeline=timeline)
        assert (plan.blocker_count, plan.warning_count) == (blockers, warnings), unknown


def test_a_release_without_a_stated_range_is_unknown_not_supported():
    book = catalog([component("logs", [release("3.0", None, None), release("3.1", "1.25", None)])])
    plan = plan_for(book, [pinned(book, "logs", "3.0.1")], "1.31", "1.32")
    [problem] = plan.windows[0].problems
    assert (problem.severity, problem.component, problem.kind) == (UNKNOWN, "logs", UNVERIFIED)
    assert "Logs 3.0: no release states support for Kubernetes 1.32, so the hop is unverified" in problem.message
    assert "the newest release kubehop knows is 3.1, stated range 1.25–? (no stated maximum)" in problem.message
    assert moves(plan.windows[0]) == [] and not plan.blocked


def test_a_pin_that_matches_no_known_release_is_reported_not_planned():
    book = catalog([store()])
    plan = plan_for(book, [pinned(book, "store", "12.0.0")], "1.31", "1.32")
    [problem] = plan.windows[0].problems
    assert problem.severity == UNKNOWN and "no known release matches '12.0.0' at store.yaml:3" in problem.message
    # Newer than the data, or a typo: the reader can tell which from the newest release kubehop knows.
    assert "(the newest release kubehop knows is 1.9 (chart 7)); its moves cannot be planned" in problem.message
    assert plan.components[0].start is None


def test_a_chart_version_past_the_chart_lines_the_data_maps_says_where_they_end():
    """kube-vip's chart lines end at 0.9 (kube-vip 1.0) while its releases go on to 1.2: a chart 0.11.0
    pin is unknown because its chart line is, which 'the newest release is 1.2' alone does not say."""
    newer = store()
    newer["releases"].append(release("1.10", "1.27", "1.34"))
    book = catalog([newer])
    [problem] = plan_for(book, [pinned(book, "store", "8.1.0")], "1.31", "1.32").windows[0].problems
    assert ("(the newest release kubehop knows is 1.10; the newest chart line it maps is 7, which ships 1.9: "
            "a chart version past it is unknown); its moves cannot be planned") in problem.message
    [problem] = plan_for(book, [pinned(book, "store", "v1.12.0", chart=False, source="image")],
                         "1.31", "1.32").windows[0].problems
    assert "chart line" not in problem.message  # an image tag is the app's own version


def test_a_range_is_planned_from_the_newest_release_it_admits():
    """Flux, Argo CD and helm dependency update install the newest release a range admits (seed 002:
    Longhorn ">=1.7.0 <1.8.0" runs 1.7.3, CNPG ">=0.22.0 <1.0.0" runs chart 0.29.0)."""
    book = catalog([gitops()])
    plan = plan_for(book, [pinned(book, "gitops", ">=2.4.0 <2.7.0")], "1.31", "1.33")
    assert moves(plan.windows[0]) == [] and moves(plan.windows[1]) == []  # 2.6 runs on 1.31-1.33
    assert plan.windows[0].problems == []  # one range is no disagreement


def test_running_outside_the_stated_range_today_is_a_warning():
    book = catalog([mesh()])
    plan = plan_for(book, [pinned(book, "mesh", "1.16.0")], "1.31", "1.32")
    [warning] = [p for p in plan.windows[0].problems if p.severity == WARNING]
    assert "does not list Kubernetes 1.31" in warning.message


def test_a_release_newer_than_the_hop_needs_is_not_sent_looking_for_an_upgrade():
    book = catalog([component("vm", [release("1.8", "1.33", "1.35"), release("1.9", "1.34", "1.36")])])
    plan = plan_for(book, [pinned(book, "vm", "1.9.0")], "1.31", "1.32")
    assert moves(plan.windows[0]) == []
    assert all(p.severity == WARNING for p in plan.windows[0].problems)
    assert "below that range" in plan.windows[0].problems[-1].message


def test_no_release_running_on_both_sides_of_a_hop_is_a_blocker():
    book = catalog([component("gap", [release("1.0", "1.29", "1.31"), release("2.0", "1.32", "1.34")])])
    plan = plan_for(book, [pinned(book, "gap", "1.0.0")], "1.31", "1.32")
    [problem] = plan.windows[0].problems
    assert problem.severity == BLOCKER and "supports both 1.31 and 1.32" in problem.message


def test_a_required_component_moves_first():
    crds = component("crds", [release("1.1", None, None), release("1.2", None, None)], one_minor=False)
    cni = component("cni", [release("1.16", "1.27", "1.31"),
                            release("1.17", "1.29", "1.32", requires=[{"component": "crds", "version": "1.2"}])])
    book = catalog([cni, crds])
    plan = plan_for(book, [pinned(book, "cni", "1.16.0"), pinned(book, "crds", "v1.1.0", False, "variable")],
                    "1.31", "1.32")
    assert moves(plan.windows[0]) == ["crds 1.1 → 1.2", "cni 1.16 → 1.17"]
    assert "required by Cni 1.17" in plan.windows[0].before[0].why


def test_a_move_a_later_hop_needs_may_land_after_an_earlier_hop():
    book = catalog([store()])
    plan = plan_for(book, [pinned(book, "store", "6.0.0")], "1.30", "1.32")
    # 1.8 runs up to 1.31; 1.9 (1.25-1.33) is needed for 1.32 and already runs on 1.31.
    assert moves(plan.windows[0]) == [] and moves(plan.windows[1]) == ["store 1.8 → 1.9"]
    assert moves(plan.windows[0], "after") == ["store 1.8 → 1.9"]
    assert "required before the hop to 1.32" in plan.windows[0].after[0].why


def test_crd_migrations_come_before_the_move_that_drops_the_api():
    rules = [crd_rules("gitops", {"apiVersion": "image.gitops.example.org/v1beta2", "kind": "ImagePolicy",
                                  "removed_in": "2.9", "replacement": "image.gitops.example.org/v1"})]
    book = catalog([gitops()], rules)
    policy = Manifest("image.gitops.example.org/v1beta2", "ImagePolicy", "app", "flux-system",
                      Origin("policy.yaml", 1, 1))
    plan = plan_for(book, [pinned(book, "gitops", "2.6.0")], "1.33", "1.36", manifests=[policy])
    assert [len(w.migrations) for w in plan.windows] == [0, 0, 1]
    [migration] = plan.windows[2].migrations
    assert migration.objects == (policy,) and migration.before == "gitops 2.9" and not migration.already
    assert [moves(w) for w in plan.windows] == [["gitops 2.6 → 2.8"], [], ["gitops 2.8 → 2.9"]]


def test_an_api_the_pinned_release_already_dropped_is_flagged_in_the_first_window():
    rules = [crd_rules("gitops", {"apiVersion": "image.gitops.example.org/v1beta1", "kind": "ImagePolicy",
                                  "removed_in": "2.5"})]
    book = catalog([gitops()], rules)
    policy = Manifest("image.gitops.example.org/v1beta1", "ImagePolicy", "app", None, Origin("p.yaml", 4, 1))
    plan = plan_for(book, [pinned(book, "gitops", "2.6.0")], "1.31", "1.32", manifests=[policy])
    [migration] = plan.windows[0].migrations
    assert migration.already


def test_hop_notes_of_the_distribution_join_kubernetes_own():
    notes = [{"distro": "kubernetes", "notes": [{"minor": "1.32", "title": "k8s", "detail": "", "source": "https://a"}]},
             {"distro": "k3s", "notes": [{"minor": "1.32", "title": "containerd 2", "detail": "",
                                          "source": "https://b"}]}]
    book = catalog([mesh()], notes=notes)
    both = plan_for(book, [], "1.31", "1.32", distro="k3s")
    plain = plan_for(book, [], "1.31", "1.32")
    assert [n.title for n in both.windows[0].notes] == ["k8s", "containerd 2"]
    assert [n.title for n in plain.windows[0].notes] == ["k8s"]


def test_the_most_trusted_pin_decides_the_release():
    book = catalog([mesh()])
    chart = pinned(book, "mesh", "1.17.0")
    image = pinned(book, "mesh", "v1.16.0", False, "image")
    [state] = component_states({"mesh": [image, chart]}, book)
    assert state.start.version == "1.17" and state.detections == [chart]


@st.composite
def random_component(draw):
    count = draw(st.integers(1, 6))
    releases = []
    for i in range(count):
        low = draw(st.one_of(st.none(), st.integers(24, 38)))
        high = draw(st.one_of(st.none(), st.integers(low or 24, 40)))
        releases.append(release(f"1.{i}", f"1.{low}" if low else None, f"1.{high}" if high else None))
    one_minor = draw(st.sampled_from([True, False, "unknown"]))
    start = draw(st.integers(0, count - 1))
    return component("random", releases, one_minor=one_minor), f"1.{start}.0"


@settings(max_examples=200, deadline=None)
@given(random_component())
def test_every_window_either_runs_the_component_on_its_hop_or_says_why_not(drawn):
    document, pin = drawn
    book = catalog([document])
    plan = plan_for(book, [pinned(book, "random", pin)], "1.30", "1.36")
    releases = book.components["random"].releases
    running, blocked = plan.components[0].start, False
    for window in plan.windows:
        for step in window.before:
            assert step.source is running and not blocked  # steps chain across windows
            if book.components["random"].one_minor_at_a_time:
                assert releases.index(step.target) == releases.index(step.source) + 1
            running = step.target
        said = [p for p in window.problems if p.component == "random"]
        unverified_since = any(p.kind == UNVERIFIED and p.message.startswith(f"Random {running.version}:")
                               for w in plan.windows[:window.number] for p in w.problems)
        assert running.supports(window.target) or said or blocked or unverified_since
        blocked = blocked or any(p.kind == BLOCKED for p in said)
    assert plan.components[0].final is running


def test_a_pin_without_upper_bound_floats_and_its_release_is_unknown():
    book = catalog([gitops()])
    plan = plan_for(book, [pinned(book, "gitops", ">=2.4.0")], "1.31", "1.32")
    [problem] = plan.windows[0].problems
    assert problem.severity == UNKNOWN and "installs the newest release" in problem.message
    assert moves(plan.windows[0]) == []


def test_pins_of_different_versions_are_planned_apart_each_at_its_own_file():
    book = catalog([mesh()])
    base = pinned(book, "mesh", "1.16.1", line=9)
    overlays = [Detection("mesh", "v1.17.2", book.components["mesh"].releases_admitted("1.17.2", True),
                          Origin(f"overlay-{n}.yaml", 3, 16), "chart", "HelmRelease mesh") for n in (1, 2)]
    plan = plan_for(book, [base, *overlays], "1.31", "1.32")
    assert [(s.key, [d.origin.path for d in s.detections]) for s in plan.components] == [
        ("mesh@1.16.1", ["mesh.yaml"]), ("mesh@1.17.2", ["overlay-1.yaml", "overlay-2.yaml"])]
    # 1.16.1 must move before 1.32; 1.17.2 supports it: the overlays' pins are not spoken for by the base's.
    [problem] = [p for p in plan.windows[0].problems if p.severity == BLOCKER]
    assert (problem.state, problem.pins) == ("mesh@1.16.1", (Origin("mesh.yaml", 9, 16),))
    assert problem.message.startswith("Mesh 1.16 supports Kubernetes 1.27–1.30, not 1.32")
    assert [(s.label, s.pins) for s in plan.windows[0].before] == [("mesh 1.16 → 1.17", (Origin("mesh.yaml", 9, 16),))]
    [finding] = [f for f in plan.findings if f.severity == "error"]
    assert (finding.rule_id, finding.origin.path, finding.remediation[-1:]) == (
        "component/mesh/unsupported", "mesh.yaml", ("before the hop to 1.32: mesh 1.16 → 1.17",))


def test_pins_written_alike_are_one_install():
    book = catalog([gitops()])
    plan = plan_for(book, [pinned(book, "gitops", "v2.5.0"), pinned(book, "gitops", "2.5.0", line=9)], "1.31", "1.32")
    assert [(s.key, len(s.detections)) for s in plan.components] == [("gitops", 2)]


def test_a_blocked_component_is_reported_once_not_at_every_later_hop():
    book = catalog([store()])
    plan = plan_for(book, [pinned(book, "store", "7.0.0")], "1.33", "1.36")
    assert [[p.severity for p in w.problems] for w in plan.windows] == [[BLOCKER], [], []]
    assert plan.blocker_count == 1


def test_api_blockers_land_in_the_window_of_the_hop_that_breaks_them():
    from scanner.model import Finding

    def finding(breaks: str, severity: str = "error") -> Finding:
        return Finding("r", severity, "gone", Origin("x.yaml", 1, 1), "batch/v1beta1", "CronJob", "n",
                       breaks_in=m(breaks))

    book = catalog([mesh()])
    plan = plan_for(book, [], "1.31", "1.34",
                    findings=[finding("1.33"), finding("1.25"), finding("1.34", "warning")])
    assert [[f.breaks_in for f in w.api_blockers] for w in plan.windows] == [[m("1.25")], [m("1.33")], []]
    assert plan.blocker_count == 2


def test_a_patch_that_restates_the_range_is_the_move_and_the_plan_names_it():
    document = component("disk", [
        {**release("1.7", "1.21", "1.28"), "patches": [
            {"from": "1.7.3", "kubernetes": {"min": "1.21", "max": "1.32"}, "source": "https://example.org/1.7.3"}]},
        release("1.8", "1.25", "1.33")])
    book = catalog([document])
    plan = plan_for(book, [pinned(book, "disk", "1.7.1")], "1.31", "1.33")
    assert [moves(w) for w in plan.windows] == [["disk 1.7.1 → 1.7.3"], ["disk 1.7.3 → 1.8"]]
    assert plan.windows[0].before[0].why == "1.7.3 supports 1.21–1.32"
    # a pin on a patch that restated its range already runs with that range
    plan = plan_for(book, [pinned(book, "disk", "1.7.4")], "1.31", "1.32")
    assert moves(plan.windows[0]) == [] and not plan.blocked


def test_a_stated_open_range_supports_every_later_minor():
    book = catalog([component("dns", [release("0.17", "1.19", "1.32"),
                                      {**release("0.18", "1.21", None), "kubernetes": {"min": "1.21", "max": None,
                                                                                     "open_ended": True}}],
                              one_minor=False)])
    plan = plan_for(book, [pinned(book, "dns", "0.17.0")], "1.32", "1.36")
    assert [moves(w) for w in plan.windows] == [["dns 0.17 → 0.18"], [], [], []]
    assert plan.windows[0].before[0].why == "0.18 supports 1.21 and later"
    assert [p.kind for p in plan.windows[0].problems] == [UNSUPPORTED]  # the pinned 0.17 stops at 1.32


def test_an_open_range_read_before_a_minor_came_out_leaves_that_hop_unverified():
    """The same "1.21 and later", read on 2026-08-22: 1.36 was out, 1.37 (2026-08-26) was not."""
    dns = component("dns", [release("0.17", "1.19", "1.32"),
                            {**release("0.18", "1.21", None), "kubernetes": {"min": "1.21", "max": None,
                                                                           "open_ended": True}}], one_minor=False)
    book = catalog([{**dns, "data_checked": "2026-08-22"}])
    plan = plan_for(book, [pinned(book, "dns", "0.18.0")], "1.35", "1.37")
    assert [p.kind for p in plan.windows[0].problems] == []
    assert [p.kind for p in plan.windows[1].problems] == [UNVERIFIED]
    assert "1.21 and later (read when 1.36 was the newest)" in plan.windows[1].problems[0].message


def test_a_chart_line_that_states_its_own_range_replaces_the_apps_for_the_pinned_chart():
    """Chart 6 ships store 1.8 (1.25–1.31), but chart 6's own kubeVersion floor is 1.27: a tree that
    pins chart 6 on Kubernetes 1.26 runs outside that range; chart 5 on the same cluster does not."""
    data = store()
    data["detect"]["chart_versions"] = [{"chart": "5", "app": "1.7"}, {
        "chart": "6", "app": "1.8", "kubernetes": {"min": "1.27", "max": "1.31"},
        "source": "https://example.org/chart-6"}, {"chart": "7", "app": "1.9"}]
    data["detect"]["chart_versions_source"] = "https://example.org/charts"
    book = catalog([data])
    plan = plan_for(book, [pinned(book, "store", "6.2.0")], "1.26", "1.27")
    [state] = plan.components
    assert (state.start.version, state.start.min, state.start.source) == ("1.8", m("1.27"),
                                                                          "https://example.org/chart-6")
    assert [p.message for p in plan.windows[0].problems if p.severity == WARNING] == [
        "Store 1.8 does not list Kubernetes 1.26 (supports 1.27–1.31): the cluster already runs outside its "
        "stated range"]
    plan = plan_for(book, [pinned(book, "store", "5.1.0")], "1.26", "1.27")
    assert [p for p in plan.windows[0].problems if p.severity == WARNING] == []


def test_with_the_clusters_minor_unknown_a_pin_no_release_matches_is_the_first_judged_hops_not_an_assumed_one():
    """scan with no --from judges a known release from the newest minor it is stated to run on (a hop to
    1.33 for one that stops at 1.32), so the span starts there; a pin that matches no release is not that
    hop's, nor the assumed minor's: it is the hop its own install is judged at, as a component with no
    data is (a new user's Argo CD tree: 'Argo CD: no known release matches 10.4.0' under 'Hop to 1.35'
    on a scan up to 1.36)."""
    book = catalog([store(), mesh()])
    states = component_states(by_component([pinned(book, "store", "12.0.0"), pinned(book, "mesh", "1.16.5")]), book)
    timeline = resolve(states, m("1.32"), m("1.36"), book, current_known=False)
    [problem] = [p for p in timeline.problems if "no known release matches" in p.message]
    assert problem.minor == m("1.36")


def test_with_the_cluster_at_the_target_each_component_is_judged_at_the_current_minor_with_no_past_hop():
    """A scan whose target is the minor the cluster runs has no hop left: a release the cluster already
    runs outside its range is an outside-range warning whose fix is the oldest release that supports the
    current minor (through each minor between when the component moves one minor at a time), not the
    moves of hops that already happened (allenporter/k8s-gitops at 1.36: 'move Flux 2.4 to 2.5 before
    the hop to 1.32')."""
    rules = [crd_rules("gitops", {"apiVersion": "image.gitops.example.org/v1beta2", "kind": "ImagePolicy",
                                  "removed_in": "2.9", "replacement": "image.gitops.example.org/v1"})]
    book = catalog([gitops(), mesh()], rules)
    policy = Manifest("image.gitops.example.org/v1beta2", "ImagePolicy", "app", "flux-system",
                      Origin("policy.yaml", 1, 1))
    states = component_states(by_component([pinned(book, "gitops", "2.4.0"), pinned(book, "mesh", "1.16.5")]),
                              book)
    timeline = resolve(states, m("1.33"), m("1.33"), book, [policy])
    assert timeline.hops == [] and all(p.minor == m("1.33") for p in timeline.all_problems)
    gitops_, mesh_ = (next(p for p in timeline.problems if p.component == name) for name in ("gitops", "mesh"))
    assert (gitops_.kind, gitops_.severity) == ("outside-range", WARNING)
    assert gitops_.text == ("Gitops 2.4 does not list Kubernetes 1.33 (supports 1.29–1.31): the cluster already "
                            "runs outside its stated range; move it to 2.6 (it supports 1.31–1.33)")
    assert gitops_.fix == ("at 1.33: gitops 2.4 → 2.6",)
    assert mesh_.advice == "move it to 1.18 one minor at a time, through 1.17 (it supports 1.30–1.33)"
    assert mesh_.fix == ("at 1.33: mesh 1.16 → 1.17", "at 1.33: mesh 1.17 → 1.18")
    assert not any("hop" in line for p in timeline.all_problems for line in (p.text, *p.fix))
    assert timeline.migrations == []  # 2.6 still serves v1beta2


def test_with_the_cluster_at_the_target_a_move_there_that_drops_an_api_is_to_migrate_before_it_not_broken():
    """Gitops 2.4 at 1.36: the cluster's minor needs 2.9, which no longer serves v1beta2; 2.4 serves it
    today, so the objects are to migrate before that move (a warning, as the move's own reason is), and
    no hop is named (allenporter/k8s-gitops' v1beta2 Alerts: 'already broken at 1.36' and 'the hop to
    1.36 needs' at once)."""
    from scanner.checks.crd_component_removal import migration_findings

    rules = [crd_rules("gitops", {"apiVersion": "image.gitops.example.org/v1beta2", "kind": "ImagePolicy",
                                  "removed_in": "2.9", "replacement": "image.gitops.example.org/v1"})]
    book = catalog([gitops()], rules)
    policy = Manifest("image.gitops.example.org/v1beta2", "ImagePolicy", "app", "flux-system",
                      Origin("policy.yaml", 1, 1))
    states = component_states(by_component([pinned(book, "gitops", "2.4.0")]), book)
    timeline = resolve(states, m("1.36"), m("1.36"), book, [policy])
    [problem] = timeline.problems
    assert problem.fix == ("at 1.36: gitops 2.4 → 2.9",)
    [migration] = timeline.migrations
    assert (migration.now, migration.hop, migration.already, migration.step.target.version) == (
        True, m("1.36"), False, "2.9")
    [finding] = migration_findings(timeline, m("1.36"))
    assert (finding.severity, finding.breaks_in) == ("warning", m("1.36"))
    assert finding.message == ("image.gitops.example.org/v1beta2 ImagePolicy is no longer served from gitops 2.9, "
                               "which the cluster's Kubernetes 1.36 needs; migrate before that move")


def test_the_tree_timeline_starts_at_the_clusters_minor_even_when_it_is_the_target():
    """timeline_start: --from, else the pinned version, wherever it is; only with neither is the minor
    before the target assumed."""
    from scanner.components.pins import ClusterPin
    from scanner.components.tree import timeline_start

    pin = ClusterPin("v1.36.2", m("1.36"), None, Origin("talconf.yaml", 4, 1), "variable kubernetesVersion")
    assert timeline_start(m("1.36"), m("1.36"), None) == (m("1.36"), True)
    assert timeline_start(m("1.36"), None, pin) == (m("1.36"), True)
    assert timeline_start(m("1.36"), m("1.33"), pin) == (m("1.33"), True)
    assert timeline_start(m("1.36"), None, None) == (m("1.35"), False)
