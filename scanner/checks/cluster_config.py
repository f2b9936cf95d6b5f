"""What the tree tells the cluster's own components that a minor along the way refuses: removed or
locked feature gates, removed flags and admission plugins, configuration versions and scheduler
plugins a component no longer reads, and settings it deprecates; each at the line of the flag or
field, at the hop where it breaks. The settings come from the sources (sources/cluster/settings.py);
the facts from rules/cluster-config/ (scanner.config_rules), imported by the functions that read them:
a tree that configures no component (a pre-commit hook's run on a manifest) creates none of their
classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Sequence

from scanner.checks.context import TREE, RuleInfo, Rules, ScanContext
from scanner.cluster_config import ADMISSION_PLUGIN, CONFIG_FIELD, CONFIG_VERSION, FEATURE_GATE, FLAG, NODE_FILE, \
    RUNTIME_CONFIG, SCHEDULER_PLUGIN, Setting
from scanner.model import Finding, Manifest
from scanner.versions import Minor

if TYPE_CHECKING:
    from scanner.config_rules import ConfigRules, Gate

GATE_REMOVED = "cluster-config/feature-gate-removed"
GATE_LOCKED = "cluster-config/feature-gate-locked"
FLAG_REMOVED = "cluster-config/flag-removed"
ADMISSION_PLUGIN_REMOVED = "cluster-config/admission-plugin-removed"
CONFIG_VERSION_REMOVED = "cluster-config/config-version-removed"
SCHEDULER_PLUGIN_REMOVED = "cluster-config/scheduler-plugin-removed"
SETTING_DEPRECATED = "cluster-config/setting-deprecated"
NODE_FILE_CHANGED = "cluster-config/node-file"
RUNTIME_CONFIG_REMOVED = "cluster-config/runtime-config-removed"
SCOPE = TREE


def _rules(_rulebook) -> dict[str, RuleInfo]:
    """Each rule and its severity once it applies; the page that answers it, where one page does (a
    finding names the source of its own gate, flag or version)."""
    from scanner.config_rules import config_rules  # here: see the module's docstring

    rules = config_rules()
    semantics, runtime_config = rules.gate_semantics, rules.runtime_config_source
    return {
        GATE_REMOVED: RuleInfo("a feature gate the hop removes", "A component given a feature gate it no longer "
                               "knows does not start: remove the gate from its --feature-gates (or featureGates) "
                               "before the hop.", "error", semantics),
        GATE_LOCKED: RuleInfo("a feature gate the hop locks to its default", "Set against the lock, the component "
                              "does not start (an error); set to the locked value it only warns and the gate is "
                              "removed later (a warning).", "error", semantics),
        FLAG_REMOVED: RuleInfo("a component flag the hop removes", "A component given a flag it no longer has does "
                               "not start: remove the flag before the hop.", "error"),
        ADMISSION_PLUGIN_REMOVED: RuleInfo("an admission plugin the hop removes", "The API server does not start "
                                           "with an admission plugin it does not have: take it out of the list "
                                           "before the hop.", "error"),
        CONFIG_VERSION_REMOVED: RuleInfo("a configuration version the hop's component no longer reads", "Move the "
                                         "configuration file to the replacement version before the hop.", "error"),
        SCHEDULER_PLUGIN_REMOVED: RuleInfo("a scheduler plugin the hop removes", "kube-scheduler does not start "
                                           "with a profile that enables or configures a plugin it does not have; a "
                                           "disabled one is a warning.", "error"),
        SETTING_DEPRECATED: RuleInfo("a component setting the hop deprecates", "Still works; plan the move the note "
                                     "names.", "warning"),
        NODE_FILE_CHANGED: RuleInfo("a node file the hop's distribution reads differently", "Rewrite the file as "
                                    "the detail says before the hop.", "warning"),
        RUNTIME_CONFIG_REMOVED: RuleInfo("a --runtime-config group version no minor serves any more", "The API "
                                         "server does not start with a group version it does not have: drop it "
                                         "from --runtime-config.", "error", runtime_config),
    }


RULES = Rules(_rules)


def check(manifests: Sequence[Manifest], context: ScanContext) -> Iterable[Finding]:
    if not context.cluster_config:
        return  # the common case: the facts are read only for a tree that configures a component
    from scanner.config_rules import config_rules  # here: see the module's docstring

    rules = config_rules()
    readers = {FEATURE_GATE: _gate, FLAG: _flag, ADMISSION_PLUGIN: _admission_plugin, CONFIG_VERSION: _config_version,
               SCHEDULER_PLUGIN: _scheduler_plugin, CONFIG_FIELD: _setting, NODE_FILE: _node_file}
    seen: set[Finding] = set()
    for setting in context.cluster_config:
        reader = readers.get(setting.kind)
        found = reader(setting, rules, context.target) if reader else ()
        if setting.kind == RUNTIME_CONFIG:
            found = _runtime_config(setting, rules, context)
        for finding in found:
            if finding not in seen:
                seen.add(finding)
                yield finding


def _projected(minor: Minor, projected: bool) -> str:
    return f" (projected: announced before {minor}'s release, not yet confirmed by its release notes)" \
        if projected else ""


def _finding(setting: Setting, rule_id: str, severity: str, message: str, fix: str, breaks_in: Minor, source: str,
             kind: str, name: str | None, api_version: str = "", replacement: str | None = None,
             note: str | None = None, deprecated_in: Minor | None = None) -> Finding:
    """`message` says what breaks and where the tree gives it; `fix`, what clears it (Finding.fix)."""
    return Finding(rule_id=rule_id, severity=severity, message=f"{message} ({setting.via})", origin=setting.origin,
                   api_version=api_version, kind=kind, name=name, breaks_in=breaks_in,
                   deprecated_in=deprecated_in, replacement=replacement, note=note, source_url=source, fix=fix)


def _gate(setting: Setting, rules: ConfigRules, target: Minor) -> Iterable[Finding]:
    gate = rules.gates.get(setting.name)
    if gate is None:
        return
    said = f"{setting.component} --feature-gates={gate.name}={setting.value}"
    history = f" ({gate.history})" if gate.history else ""
    if gate.locked_in is not None and gate.locked_in <= target and (gate.removed_in is None
                                                                     or gate.locked_in < gate.removed_in):
        yield _locked(setting, gate, said, history, rules)
    if gate.removed_in is not None and gate.removed_in <= target:
        yield _finding(setting, GATE_REMOVED, "error",
                       f"{said}: the feature gate{history} is removed in {gate.removed_in}"
                       f"{_projected(gate.removed_in, gate.projected)}, and {setting.component} refuses to start "
                       f"with a gate it does not know", "remove the gate before the hop",
                       gate.removed_in, gate.removal_source, "FeatureGate", gate.name, note=_semantics(rules))


def _locked(setting: Setting, gate: Gate, said: str, history: str, rules: ConfigRules) -> Finding:
    locked = "true" if gate.locked_to else "false"
    projected = _projected(gate.locked_in, gate.lock_projected)
    if setting.value == locked:
        return _finding(setting, GATE_LOCKED, "warning",
                        f"{said}: the feature gate{history} is locked to {locked} from {gate.locked_in}{projected}; "
                        f"setting it does nothing (a deprecation warning) and the gate will be removed",
                        "remove the setting", gate.locked_in, gate.source, "FeatureGate", gate.name,
                        note=_semantics(rules))
    return _finding(setting, GATE_LOCKED, "error",
                    f"{said}: the feature gate{history} is locked to {locked} from {gate.locked_in}{projected}, and "
                    f"{setting.component} refuses to start when it is set to {setting.value}",
                    "remove the setting (and whatever depended on the feature being off) before the hop",
                    gate.locked_in, gate.source, "FeatureGate", gate.name, note=_semantics(rules))


def _semantics(rules: ConfigRules) -> str:
    return f"component-base's answers to removed and locked gates: {rules.gate_semantics}"


def _flag(setting: Setting, rules: ConfigRules, target: Minor) -> Iterable[Finding]:
    removed = rules.flags.get((setting.component, setting.name))
    if removed is None or removed.removed_in > target:
        return
    yield _finding(setting, FLAG_REMOVED, "error",
                   f"{setting.component} --{setting.name} is removed in {removed.removed_in}"
                   f"{_projected(removed.removed_in, removed.projected)}: {setting.component} does not start with "
                   f"a flag it does not know", "remove the flag before the hop", removed.removed_in, removed.source,
                   setting.component, f"--{setting.name}", note=removed.note)


def _admission_plugin(setting: Setting, rules: ConfigRules, target: Minor) -> Iterable[Finding]:
    removed = rules.admission_plugins.get(setting.name)
    if removed is None or removed.removed_in > target:
        return
    yield _finding(setting, ADMISSION_PLUGIN_REMOVED, "error",
                   f"{setting.component} --{setting.value} names the {removed.name} admission plugin, removed in "
                   f"{removed.removed_in}{_projected(removed.removed_in, removed.projected)}: the API server does "
                   f"not start with a plugin it does not have",
                   f"take it out of the list before the hop (replacement: {removed.replacement})", removed.removed_in,
                   removed.source, "AdmissionPlugin", removed.name, replacement=removed.replacement)


def _config_version(setting: Setting, rules: ConfigRules, target: Minor) -> Iterable[Finding]:
    removed = rules.config_versions.get(setting.name)
    if removed is None or setting.value not in removed.kinds or removed.removed_in > target:
        return
    yield _finding(setting, CONFIG_VERSION_REMOVED, "error",
                   f"{setting.name} {setting.value} is no longer read from {removed.removed_in}"
                   f"{_projected(removed.removed_in, removed.projected)}: {removed.component} does not start with "
                   f"it", f"move the file to {removed.replacement} before the hop", removed.removed_in,
                   removed.source, setting.value, setting.component, api_version=setting.name,
                   replacement=removed.replacement, note=removed.note or None)


def _scheduler_plugin(setting: Setting, rules: ConfigRules, target: Minor) -> Iterable[Finding]:
    removed = rules.scheduler_plugins.get(setting.name)
    if removed is None or removed.removed_in > target:
        return
    if setting.value == "disabled":
        yield _finding(setting, SCHEDULER_PLUGIN_REMOVED, "warning",
                       f"the scheduler profile disables {removed.name}, which kube-scheduler no longer has from "
                       f"{removed.removed_in}{_projected(removed.removed_in, removed.projected)}", "drop the entry",
                       removed.removed_in, removed.source, "SchedulerPlugin", removed.name,
                       replacement=removed.replacement)
        return
    yield _finding(setting, SCHEDULER_PLUGIN_REMOVED, "error",
                   f"the scheduler profile {'configures' if setting.value == 'configured' else 'enables'} "
                   f"{removed.name}, which kube-scheduler no longer has from {removed.removed_in}"
                   f"{_projected(removed.removed_in, removed.projected)}: kube-scheduler does not start with it",
                   f"remove it before the hop (replacement: {removed.replacement})", removed.removed_in,
                   removed.source, "SchedulerPlugin", removed.name, replacement=removed.replacement)


def _setting(setting: Setting, rules: ConfigRules, target: Minor) -> Iterable[Finding]:
    for deprecated in rules.settings:
        if (deprecated.component, deprecated.setting, deprecated.value) == (setting.component, setting.name,
                                                                             setting.value) \
                and deprecated.deprecated_in <= target:
            yield _finding(setting, SETTING_DEPRECATED, "warning",
                           f"{setting.component} {setting.name}: {setting.value} is deprecated from "
                           f"{deprecated.deprecated_in}: {deprecated.note.rstrip('.')}",
                           f"plan a move to {deprecated.replacement}", deprecated.deprecated_in, deprecated.source,
                           setting.component, f"{setting.name}: {setting.value}", replacement=deprecated.replacement,
                           deprecated_in=deprecated.deprecated_in)


def _node_file(setting: Setting, rules: ConfigRules, target: Minor) -> Iterable[Finding]:
    changed = rules.node_files.get(setting.name)
    if changed is None or changed.changed_in > target:
        return
    yield _finding(setting, NODE_FILE_CHANGED, "warning",
                   f"{setting.name} ({', '.join(changed.distros)} node file) changes meaning at "
                   f"{changed.changed_in}: {changed.detail.rstrip('.')}",
                   f"write {changed.unless_beside} beside it before the hop" if changed.unless_beside
                   else "rewrite it before the hop", changed.changed_in, changed.source, "NodeFile",
                   setting.name)


def _runtime_config(setting: Setting, rules: ConfigRules, context: ScanContext) -> Iterable[Finding]:
    """A built-in group/version --runtime-config names, once no kind of it is served any more."""
    gone = _gone_in(setting.name, context.rulebook)
    if gone is None or gone[0] > context.target:
        return
    minor, projected, source = gone
    yield _finding(setting, RUNTIME_CONFIG_REMOVED, "error",
                   f"{setting.component} --runtime-config={setting.name}={setting.value}: no kind of "
                   f"{setting.name} is served from {minor}{_projected(minor, projected)}, and the API server does "
                   f"not start with a group version it does not have", "drop it from --runtime-config before the hop",
                   minor, source or rules.runtime_config_source, "RuntimeConfig", setting.name,
                   api_version=setting.name, note=f"the API server's answer: {rules.runtime_config_source}")


def _gone_in(group_version: str, rulebook) -> tuple[Minor, bool, str | None] | None:
    """The first minor that serves no kind of a built-in group/version (its rules' removals, else the
    served data's last minor), whether that rests on a projection, and the source; None: still served."""
    ends = []
    for (api_version, kind), (_, last) in rulebook.served.spans.items():
        if api_version != group_version:
            continue
        rule = rulebook.api_rules.get((api_version, kind))
        if rule is not None and rule.removed_in is not None:
            ends.append((rule.removed_in, rule.projected, rule.source))
        elif last is None:
            return None
        else:
            ends.append((last.next(), False, None))
    return max(ends, key=lambda end: end[0]) if ends else None
