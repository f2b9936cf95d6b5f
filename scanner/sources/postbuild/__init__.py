"""Flux Kustomizations' post-build variable substitution, applied to the objects the sources read
(plan.py: read from the plain files before anything else, which Kustomizations build each file and
what their variables are): Flux's `${...}` syntax (envsubst), where the variables come from (variables:
ConfigMaps, Secrets, generators, the inline map), what a Kustomization's build holds (builds), a
parent's patches to its children's postBuild (patches), and each object filled in at its nodes (fill).
A scan none of whose plain files names Flux's Kustomization group imports none of them."""

FLUX = "kustomize.toolkit.fluxcd.io"  # the API group of Flux's Kustomizations
