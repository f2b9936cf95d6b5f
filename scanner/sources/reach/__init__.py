"""What the repository's deployment roots reach: which folders and files Flux and Argo CD deploy.

A GitOps repository is deployed from its roots: the folder `flux bootstrap` syncs (or a FluxInstance's
`sync`, a Kustomization that manages itself), and the Argo CD Applications applied by hand. From each,
every Flux Kustomization and Argo CD Application the builds reach points at more folders, in turn.
`roots.py` finds the roots and where a Flux Kustomization points, `appsets.py` what an ApplicationSet
makes, `graph.py` walks the builds, `unreached.py` names the files no root reaches. The fleet of
clusters (scanner.clusters) is read from the same walk.
"""
