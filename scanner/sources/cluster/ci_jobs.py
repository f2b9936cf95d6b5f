"""Whether a GitHub Actions job reaches a cluster, read from its steps: what each `uses` does (the
`ci_jobs` actions of rules/client-tools.yaml; a local composite action's own steps), each `run` script
(ci_scripts.py), and the env and inputs that hand it a kubeconfig. A client the job pins is bound by
the skew of the cluster kubehop plans only when the job reaches that cluster (checks/client_tools.py);
unknown is never fine: a job that runs what kubehop does not read is undecided, and judged as one
that reaches it. A job whose commands talk only to a cluster it creates (kind) reaches its own.

Files are read only inside the workflow's repository: the folder holding its `.github/workflows`,
else the Git work tree that holds it.
"""

from __future__ import annotations

import os
from typing import Any

import yaml
from yaml.nodes import MappingNode, SequenceNode

from scanner.ci_rules import CLUSTER, CREDENTIALS, OFFLINE, OWN_CLUSTER, UNDECIDED
from scanner.cluster_config import JOB_OFFLINE, JOB_OWN_CLUSTER, JOB_REACHES, JOB_UNDECIDED, JobReach
from scanner.containment import git_top
from scanner.nodes import mapping_get, scalar, sequence_items
from scanner.sources.cluster.ci_scripts import Context, ScriptReader


_ACTION_SAYS = {CREDENTIALS: ", which gives the job a cluster's credentials", CLUSTER: ", which talks to the cluster",
                OWN_CLUSTER: ", which creates a cluster for the job"}


class _Job(ScriptReader):
    """A job's steps read for what they do to it, then the answer (`decide`)."""

    def steps(self, steps: list[Any], cwd: str | None, shell: str | None, depth: int = 0) -> None:
        for number, step in enumerate(steps, 1):
            where = f"step {scalar(mapping_get(step, 'name')) or scalar(mapping_get(step, 'id')) or number}"
            uses = scalar(mapping_get(step, "uses"))
            if uses:
                self.uses(uses.strip(), step, where, depth)
            self.inputs(mapping_get(step, "env"), where)
            self.inputs(mapping_get(step, "with"), where)
            run = scalar(mapping_get(step, "run"))
            if run is not None:
                folder = scalar(mapping_get(step, "working-directory"))
                here = self.join(cwd, folder) if folder else cwd
                self.run(run, Context(where, here, depth=depth), scalar(mapping_get(step, "shell")) or shell)

    def inputs(self, node: Any, where: str) -> None:
        """Env keys and values, `with` inputs: one that names a kubeconfig hands the job credentials."""
        for key, value in node.value if isinstance(node, MappingNode) else ():
            text = f"{scalar(key) or ''}={scalar(value) or ''}"
            if self.rules.names_kubeconfig(text):
                self.note(CREDENTIALS, f"{where} hands it {scalar(key)}, a kubeconfig")

    def uses(self, uses: str, step: Any, where: str, depth: int) -> None:
        if uses.startswith("docker://"):
            self.note(UNDECIDED, f"{where} runs the container {uses}")
            return
        if uses.startswith("./"):
            self.local_action(uses, where, depth)
            return
        name = uses.partition("@")[0]
        known = self.rules.action(name)
        if known is None:
            self.note(UNDECIDED, f"{where} uses {name}, an action kubehop does not know")
            return
        does, _ = known
        self.note(does, f"{where} uses {name}{_ACTION_SAYS.get(does, '')}")
        if name.lower() == "actions/checkout":
            self.checkout(step)

    def checkout(self, step: Any) -> None:
        """A checkout into a folder of the workspace: of this repository, its files are the ones kubehop
        reads (at another ref, as near as kubehop can tell); of another, files there are not read."""
        inputs = mapping_get(step, "with")
        path, other = scalar(mapping_get(inputs, "path")), scalar(mapping_get(inputs, "repository"))
        if not path or not self.root or "$" in path:
            return
        folder = os.path.normpath(os.path.join(self.root, path))
        (self.mirrors if not other or "github.repository" in other else self.outside).append(folder)

    def local_action(self, uses: str, where: str, depth: int) -> None:
        folder, why = self.resolve(uses, Context(where, self.root))
        if folder is None or not os.path.isdir(folder):
            self.note(UNDECIDED, f"{where} uses {uses}, {why or 'a folder the repository does not hold'}")
            return
        for name in ("action.yml", "action.yaml"):
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                break
        else:
            self.note(UNDECIDED, f"{where} uses {uses}, which has no action.yml")
            return
        root = self.read_yaml(path, where, depth)
        runs = mapping_get(root, "runs")
        if scalar(mapping_get(runs, "using")) != "composite":
            self.note(UNDECIDED, f"{where} uses {uses}, an action that is not a composite kubehop can read")
            return
        self.steps(sequence_items(mapping_get(runs, "steps")), self.root, None, depth + 1)

    def read_yaml(self, path: str, where: str, depth: int) -> Any:
        text = self.read(path, where, depth)
        try:
            return yaml.compose(text, Loader=yaml.SafeLoader) if text is not None else None
        except yaml.YAMLError:
            self.note(UNDECIDED, f"{where}: {self.shown(path)} is not YAML kubehop can read")
            return None

    def decide(self, job: str) -> JobReach:
        found = self.found
        if found[CREDENTIALS]:
            return JobReach(job, JOB_REACHES, found[CREDENTIALS][0])
        if found[CLUSTER] and not found[OWN_CLUSTER]:
            return JobReach(job, JOB_REACHES, found[CLUSTER][0])
        if found[UNDECIDED]:
            return JobReach(job, JOB_UNDECIDED, found[UNDECIDED][0])
        if found[OWN_CLUSTER]:
            talk = ", and its commands talk to that cluster" if found[CLUSTER] else ""
            return JobReach(job, JOB_OWN_CLUSTER, found[OWN_CLUSTER][0] + talk)
        offline = [w.split("`")[1] for w in found[OFFLINE] if "`" in w]
        said = f"it runs {', '.join(dict.fromkeys(offline))} only" if offline else "it runs no client"
        return JobReach(job, JOB_OFFLINE, f"{said}, and no step reaches a cluster")


def job_reach(path: str, workflow: Any, name: str, job: Any) -> JobReach:
    """Whether job `name` of the workflow file at `path` reaches a cluster, and why."""
    root = workflow_root(path)
    reader = _Job(root)
    defaults = [mapping_get(mapping_get(node, "defaults"), "run") for node in (workflow, job)]
    folder = next((scalar(mapping_get(d, "working-directory")) for d in reversed(defaults)
                   if scalar(mapping_get(d, "working-directory"))), None)
    shell = next((scalar(mapping_get(d, "shell")) for d in reversed(defaults) if scalar(mapping_get(d, "shell"))), None)
    reader.inputs(mapping_get(workflow, "env"), "the workflow's env")
    reader.inputs(mapping_get(job, "env"), "the job's env")
    steps = mapping_get(job, "steps")
    reader.steps(sequence_items(steps) if isinstance(steps, SequenceNode) else [],
                 reader.join(root, folder) if folder else root, shell)
    return reader.decide(name)


def workflow_root(path: str) -> str | None:
    """The repository of a workflow file: the folder holding its `.github/workflows`, else the Git work
    tree holding it; None when neither (its scripts cannot be read)."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.basename(folder) == "workflows" and os.path.basename(os.path.dirname(folder)) == ".github":
        return os.path.realpath(os.path.dirname(os.path.dirname(folder)))
    return git_top(os.path.realpath(folder))
