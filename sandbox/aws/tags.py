"""Tags the embedded endpoint reads on a resource to emulate what runs on it (no moto here: the demo imports it).

``HEALTH_PUSH_URL`` and ``HEALTH_PUSH_TOKEN`` on a HyperPod cluster stand for its nodes' exporter configuration:
an emulated node that comes back from a reboot or replacement pushes its health there
(``sandbox.aws.moto_hyperpod_nodes``)."""

HEALTH_PUSH_URL = "geniac:emulation:health-push-url"
HEALTH_PUSH_TOKEN = "geniac:emulation:health-push-token"  # noqa: S105 - a tag's name, not a secret
