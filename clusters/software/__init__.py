"""The versioned software stack a launch installs on a cluster's nodes: one directory per version (scripts,
Kubernetes manifests, its manifest.json), and ``stack``, which reads it, fills it in and bundles it."""
