"""Upgrade orders: the objects in a tree that move the cluster's own nodes to a Kubernetes version.

kinds    what rules/upgrade-orders.yaml says each kind's fields mean
read     the orders of a tree, with the line of each field, grouped by cluster
releases the newest known patch of each minor, per distribution (rules/distro-releases.yaml)
write    the orders that perform each hop of a plan, in the tree's own style
edit     write's edits of an order's document (ruamel.yaml, imported only for a file to edit)
"""
