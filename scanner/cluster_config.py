"""What the tree configures its cluster's own components and clients with, as the sources read it.

Not Kubernetes objects: a K3s `kubelet-arg` entry, a kubeadm `extraArgs` key, a Talos patch, the
kubectl a devcontainer installs. Sources (sources/cluster/settings.py, sources/tool_files.py) turn the
files into these records, each at the file, line and column a person edits; the checks
(checks/cluster_config.py, checks/client_tools.py) hold them against the data of each hop.
"""

from __future__ import annotations

from dataclasses import dataclass

from scanner.model import Origin

# What a Setting is about.
FEATURE_GATE = "feature-gate"  # name: the gate, value: "true" / "false"
FLAG = "flag"  # name: the flag without its dashes, value: what it is set to ("" for a bare flag)
ADMISSION_PLUGIN = "admission-plugin"  # name: a plugin --enable-admission-plugins names
CONFIG_VERSION = "config-version"  # name: a configuration object's apiVersion, value: its kind
SCHEDULER_PLUGIN = "scheduler-plugin"  # name: a plugin a KubeSchedulerConfiguration profile names
CONFIG_FIELD = "config-field"  # name: a configuration field (e.g. mode), value: what it is set to
RUNTIME_CONFIG = "runtime-config"  # name: a group/version --runtime-config names, value: true / false
NODE_FILE = "node-file"  # name: a file a node reads as it is (config.toml.tmpl), value: its folder
MANIFEST_URL = "manifest-url"  # name: a URL Talos applies (cluster.extraManifests): a component pin, no flag


@dataclass(frozen=True, slots=True)
class Setting:
    """One thing the tree tells a component (kube-apiserver, kubelet, ...), where it says it."""

    component: str  # kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubeadm, node
    kind: str
    name: str
    value: str
    origin: Origin
    via: str  # how the tree gives it, for a person: "K3s config kubelet-arg", "Talos machine config", ...


# Whether the CI job a pin is written in reaches a cluster (sources/cluster/ci_jobs.py).
JOB_REACHES = "reaches"  # it has credentials for a cluster, or talks to one
JOB_UNDECIDED = "undecided"  # it runs what kubehop does not read: judged as one that reaches it
JOB_OWN_CLUSTER = "own-cluster"  # it talks only to a cluster it creates itself (kind), of its own version
JOB_OFFLINE = "offline"  # it runs no client against a cluster (renders, lints, packages)


@dataclass(frozen=True, slots=True)
class JobReach:
    job: str  # its key under `jobs`
    state: str  # JOB_*
    why: str  # for a person: "step Deploy runs `kubectl apply`"

    @property
    def judged(self) -> bool:
        """Is a pin of this job held against the hops of the cluster kubehop plans?"""
        return self.state in (JOB_REACHES, JOB_UNDECIDED)


@dataclass(frozen=True, slots=True)
class ToolPin:
    """A client tool's version the tree pins (a .tool-versions line, an image tag, a CI step)."""

    tool: str  # kubectl, helm, flux (rules/client-tools.yaml)
    version: str  # as written, e.g. v1.31.4
    origin: Origin
    via: str  # where it is pinned, for a person: ".tool-versions", "image of CronJob ns/name", ...
    job: JobReach | None = None  # a CI step's pin: whether its job reaches a cluster


def manifest_urls(settings) -> list[tuple[str, Origin]]:
    """(URL, where) of each URL the tree has Talos apply (MANIFEST_URL settings)."""
    return [(s.name, s.origin) for s in settings if getattr(s, "kind", None) == MANIFEST_URL]
