"""Upgrade orders: the objects in a tree that move the cluster's own nodes to a Kubernetes version.

kinds    what rules/upgrade-orders.yaml says each kind's fields mean
read     the orders of a tree, with the line of each field, grouped by cluster
releases the newest known patch of each minor, per distribution (rules/distro-releases.yaml)
write    the orders that perform each hop of a plan, in the tree's own style
edit     write's edits of an order's document (ruamel.yaml, imported only for a file to edit)

`may_hold_orders` tells from the data alone whether any of some objects is an upgrade order: a run
none of whose objects is one (a one-file scan, mostly) imports nothing else of the package.
"""

from __future__ import annotations

import functools
from typing import Iterable

from scanner import data
from scanner.model import Manifest


@functools.cache
def _order_api_kinds() -> frozenset[tuple[str, str]]:
    """(apiVersion, kind) of each kind of upgrade order (rules/upgrade-orders.yaml, as kinds.py reads it)."""
    return frozenset((api_version, entry["kind"]) for entry in data.load("rules/upgrade-orders.yaml")["kinds"]
                     for api_version in entry["apiVersions"])


def may_hold_orders(manifests: Iterable[Manifest]) -> bool:
    """Is any of `manifests` of a kind of upgrade order (read.read_orders reads those that are)?"""
    kinds = _order_api_kinds()
    return any((manifest.api_version, manifest.kind) in kinds for manifest in manifests)
