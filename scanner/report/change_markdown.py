"""A window's change set as the body of its pull request: what moves and why (with sources), the API
migrations, the hop, what is left to a person, and what to verify after the hop.

Under GitHub's limit (scanner.report.comment). Names, paths and values from the tree go through
scanner.report.md; commands are fenced (their paths shell-quoted where they are made).
"""

from __future__ import annotations

from scanner import __version__
from scanner.changes.model import ChangeSet, Manual
from scanner.freshness import data_checked
from scanner.report import comment, md
from scanner.report.change_text import title
from scanner.paths import where
from scanner.words import count


def render(change_set: ChangeSet, limit: int | None = comment.LIMIT, full_report: str | None = None) -> str:
    return comment.fit(_head(change_set), _parts(change_set), _tail(change_set), limit, full_report,
                       what="change-set item")


def _head(change_set: ChangeSet) -> str:
    window, plan = change_set.window, change_set.plan
    files = change_set.files
    done = "✅ the whole window is written" if change_set.complete else \
        f"⚠️ {count(len(change_set.manual), 'step')} left to a person (below)"
    then = "the hop waits (below)" if change_set.hop_waits else "then the hop itself"
    lines = [f"## kubehop: {md.text(title(change_set))}", "",
             f"Moves what Kubernetes {window.target} needs before the hop, {then}: "
             f"{count(len(files), 'file')}, {done}.", ""]
    if window.number > 1:
        lines += [f"> Written for W{window.number} of the plan from {plan.current}: the windows before it are "
                  "taken to have landed; a pin still at an earlier window's release is left to a person.", ""]
    return "".join(line + "\n" for line in lines)


def _parts(change_set: ChangeSet) -> list[comment.Part]:
    parts = [_shared(change_set), _moves(change_set), _migrations(change_set), _hop(change_set), _manual(change_set),
             _verify(change_set)]
    return [comment.Part(text, 1) for text in parts if text]


def _shared(change_set: ChangeSet) -> str:
    """The files of this cluster's change set that other clusters of the fleet deploy too."""
    if not change_set.shared:
        return ""
    others = sorted({n for names in change_set.shared.values() for n in names})
    lines = ["### Other clusters this moves", "",
             f"> ⚠️ This change set is made for cluster {md.text(change_set.cluster or '')}, but "
             f"{count(len(change_set.shared), 'file')} it changes {'is' if len(change_set.shared) == 1 else 'are'} "
             f"deployed by {md.text(', '.join(others))} too: merging it moves them on their next reconcile.", ""]
    lines += [f"- {md.path(where(path))}: {md.text(', '.join(names))}" for path, names in change_set.shared.items()]
    return "\n".join(lines) + "\n\n"


def _moves(change_set: ChangeSet) -> str:
    if not change_set.moves:
        return ""
    lines = ["### What moves before the hop, and why", "",
             "Land them in this order (a move another one requires comes first), and let each reconcile on "
             f"{change_set.window.source} before the hop.", "",
             "| Component | Move | Why | Source | Written |", "|---|---|---|---|---|"]
    for move in change_set.moves:
        step = move.step
        written = "<br>".join(f"{md.path(where(e.path, e.line))} {md.code(e.old)} → {md.code(e.new)}"
                              for e in (*move.edits, *move.in_step))
        source = md.link(f"{step.component.title} {step.target.version}", step.target.source) \
            if step.target.source.startswith("https://") else "—"
        lines.append(f"| {md.text(step.component.title)} | {md.text(step.source.version)} → "
                     f"{md.text(step.target.version)} | {md.text(step.why)} | {source} | {written} |")
    in_step = [e for m in change_set.moves for e in m.in_step]
    if in_step:
        lines += ["", "Kept in step with the pin kubehop plans from (a bootstrap file, a variable): "
                  + ", ".join(md.path(where(e.path, e.line)) for e in in_step) + "."]
    return "\n".join(lines) + "\n\n"


def _migrations(change_set: ChangeSet) -> str:
    if not change_set.migrated:
        return ""
    lines = ["### API migrations", "", "Made by `kubehop fix`'s engine: the apiVersion and the fields that go "
             "with it; comments, key order and every other line are kept.", ""]
    lines += [f"- {md.path(where(m.path, m.line))} {md.text(m.object)}: {md.code(m.old, in_table=False)} → "
              f"{md.code(m.new, in_table=False)} ({md.text(m.why)})" for m in change_set.migrated]
    return "\n".join(lines) + "\n\n"


def _hop(change_set: ChangeSet) -> str:
    window = change_set.window
    lines = [f"### The hop to {window.target}", ""]
    lines += [f"- {md.path(where(e.path, e.line))} {md.text(e.what)}: {md.code(e.old, in_table=False)} → "
              f"{md.code(e.new, in_table=False)}" for e in change_set.hop]
    lines += [f"- upgrade order {md.code(what, in_table=False)}" for what in change_set.orders]
    if change_set.hop_waits:
        lines.append(f"- Not in this change set: the hop waits for the steps left to a person below. Once they "
                     f"are done, {_command(change_set, f'--window {window.number} --write')} writes it.")
        return "\n".join(lines) + "\n\n"
    if not change_set.hop and not change_set.orders:
        lines.append(f"- The tree holds no upgrade order or version variable for the cluster at {window.source}: "
                     f"upgrade it to {window.target} as you do.")
    lines += ["", "The hop starts once the moves above are Ready on the cluster: if the upgrade orders apply by "
              "themselves (system-upgrade-controller), merge them after the moves have reconciled."]
    return "\n".join(lines) + "\n\n"


def _manual(change_set: ChangeSet) -> str:
    if not change_set.manual:
        return ""
    lines = [f"### Left to a person ({len(change_set.manual)})", ""]
    for manual in change_set.manual:
        lines.extend(_manual_lines(manual))
    return "\n".join(lines) + "\n\n"


def _manual_lines(manual: Manual) -> list[str]:
    at = f" ({md.path(manual.where)})" if manual.where else ""
    lines = [f"- [ ] **{md.text(manual.what)}**: {md.text(manual.why)}{at}"]
    if manual.command:
        lines += ["", *(f"  {line}" for line in md.fenced([manual.command], "sh"))]
    return lines


def _verify(change_set: ChangeSet) -> str:
    window = change_set.window
    whats = [e.what for m in change_set.moves for e in m.edits]
    lines = ["### Verify after the hop", "",
             f"- [ ] every node is Ready at {window.target}: `kubectl get nodes -o wide`"]
    if any(w.startswith("HelmRelease ") for w in whats):
        lines.append("- [ ] every HelmRelease is Ready at its new chart: `flux get helmreleases -A`")
    if any(w.startswith(("Application ", "ApplicationSet ")) for w in whats):
        lines.append("- [ ] every Argo CD Application is Synced and Healthy: `kubectl get applications.argoproj.io -A`")
    if any(w.startswith(("OCIRepository ", "GitRepository ")) or "kustomization" in w for w in whats):
        lines.append("- [ ] every Flux Kustomization is Ready: `flux get kustomizations -A`")
    lines += [f"- [ ] {md.text(m.step.component.title)} runs {md.text(m.step.target.version)} and is healthy"
              for m in change_set.moves]
    if change_set.migrated:
        lines.append("- [ ] the migrated objects are served at their new apiVersion: `kubectl get` each by its new "
                     "version")
    lines.append(f"- [ ] {_command(change_set, f'--from {window.target}')} on the merged tree: this window's moves "
                 "are gone")
    if window.notes:
        lines += ["", f"<details><summary>Hop notes for {window.target}: {count(len(window.notes), 'note')}"
                      "</summary>", ""]
        lines += [f"- [ ] **{md.text(n.title)}** ({md.text(n.distro)}): {md.prose(n.detail)} {md.link('source', n.source)}"
                  for n in window.notes]
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n\n"


def _command(change_set: ChangeSet, options: str) -> str:
    """`kubehop plan OPTIONS` as a code span, for the change set's cluster of a fleet."""
    import shlex

    of = f"--cluster {shlex.quote(change_set.cluster)} " if change_set.cluster else ""
    return md.code(f"kubehop plan {of}{options}", in_table=False)


def _tail(change_set: ChangeSet) -> str:
    lines = [f"- {md.text(n)}" for n in change_set.notices]
    lines += ["", f"<sub>Written by kubehop {__version__} (`kubehop plan --window {change_set.window.number}`); "
                  f"data checked {data_checked()}: releases after it are unknown to kubehop.</sub>", ""]
    return "\n".join(lines)
