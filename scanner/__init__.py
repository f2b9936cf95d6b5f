"""kubehop: what breaks when a cluster moves from one Kubernetes minor to the next."""

__version__ = "0.1.0"
