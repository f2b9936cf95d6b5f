"""The cluster's own configuration and its clients, as the tree holds them: what it hands the control
plane and the nodes (settings.py: K3s/RKE2, Ansible, k3d, kubeadm, component configuration files;
talos.py: Talos machine configs and talhelper's talconfig.yaml; reading.py: what they share) and the
client tools it pins (tool_pins.py; whether the CI job of a pin reaches a cluster: ci_jobs.py, which
reads its scripts with ci_scripts.py and ci_shell.py). The plain-file source (files/source.py) hands each file's
documents here as it reads them; the analysis walks the tree for the tool files no manifest walk
reads. What they give is scanner.cluster_config's Settings and ToolPins, for the checks."""
