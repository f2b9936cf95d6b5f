"""The hop itself in a window's change set: what the tree says the cluster runs, moved to the new minor.

The upgrade orders (system-upgrade Plans, KubernetesNodeUpgrade) are written by scanner.orders.write,
as `plan --orders` writes them, but into the tree itself. A cluster version variable (Ansible's
`k3s_version`, talhelper's `kubernetesVersion`) is set to the newest patch of the minor the data knows
for the distribution (rules/distro-releases.yaml); without one, the step is a person's.
"""

from __future__ import annotations

import os
from typing import Sequence

from scanner.changes.model import Edit, Manual
from scanner.changes.scalar_edit import NotEditable
from scanner.changes.texts import Texts
from scanner.components.pins import ClusterPin
from scanner.orders.read import UpgradeOrder
from scanner.orders.releases import newest_patch
from scanner.orders.write import orders_for_windows, window_folder
from scanner.paths import where
from scanner.versions import Minor


def upgrade_orders(orders: Sequence[UpgradeOrder], number: int, source: Minor, target: Minor, texts: Texts,
                   manual: list[Manual], notices: list[str]) -> list[str]:
    """Write the window's upgrade orders (the analysis') into the tree; what they do, one line each. Orders of
    a distribution whose release of `target` the data does not know are a person's: a change set writes no
    placeholder."""
    unknown = sorted({o.distro or "kubernetes" for o in orders if newest_patch(o.distro or "kubernetes", target) is None})
    if unknown:
        manual.append(Manual(f"upgrade orders for {target}", (
            f"the data knows no {' or '.join(unknown)} release of {target} (rules/distro-releases.yaml): set the "
            f"orders' version to a {target} patch by hand")))
        return []
    result = orders_for_windows(orders, [(number, source, target)], texts.root)
    notices.extend(result.notes)
    done: list[str] = []
    prefix = window_folder(number, target) + "/"
    for written in result.for_window(number):
        relative = written.path.removeprefix(prefix)
        path = os.path.join(texts.root, *relative.split("/"))
        try:
            if os.path.realpath(written.based_on) == os.path.realpath(path):
                if texts.text(written.based_on) != texts.original[written.based_on]:
                    raise NotEditable("the change set edits other values in it")
                texts.replace(written.based_on, written.text, _described(written.orders))
            else:
                texts.add(path, written.text, _described(written.orders))
        except NotEditable as why:
            manual.append(Manual(f"upgrade orders for {target}", f"{relative}: not written ({why}); "
                                                                 f"`kubehop plan --orders DIR` writes it aside"))
            continue
        done.extend(written.orders)
        notices.extend(f"{relative}: {note}" for note in written.notes)
    return done


def _described(orders: Sequence[str]) -> str:
    return "upgrade orders: " + "; ".join(orders)


def version_variables(pins: Sequence[ClusterPin], source: Minor, target: Minor, texts: Texts,
                      manual: list[Manual]) -> list[Edit]:
    """Cluster version variables that say the cluster runs `source`, set to `target`'s newest known patch."""
    edits = []
    for pin in pins:
        if not pin.is_variable or pin.minor != source:
            continue
        place = where(pin.origin.path, pin.origin.line, pin.origin.column)
        release = newest_patch(pin.distro or "kubernetes", target)
        if release is None:
            manual.append(Manual(f"{pin.what}: {target}", f"the data knows no {pin.distro or 'Kubernetes'} release of "
                                                           f"{target} (rules/distro-releases.yaml): set a {target} "
                                                           "patch by hand", place))
            continue
        new = release.version if pin.version.startswith(("v", "V")) else release.version.lstrip("v")
        try:
            edit = texts.edit(pin.origin.path, pin.origin.line, pin.origin.column,
                              lambda value, old=pin.version: new if value == old else None, pin.what)
        except NotEditable as why:
            manual.append(Manual(f"{pin.what}: {target}", f"set {pin.version!r} to {new!r} by hand ({why})", place))
            continue
        texts.note(pin.origin.path, f"hop to {target}: {pin.what} {edit.old} → {edit.new}")
        edits.append(edit)
    return edits
