"""What a cluster's Helm has deployed (--helm-releases), read offline from its release Secrets
(source.py: the entry `collect` calls; helm_releases.py: the decoding)."""
