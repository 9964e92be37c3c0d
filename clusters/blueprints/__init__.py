"""CloudFormation blueprints the portal launches; read them with :mod:`clusters.blueprints.cfn`."""

from pathlib import Path

BLUEPRINTS_DIR = Path(__file__).resolve().parent


def path(slug: str) -> Path:
    """Path of the blueprint named ``slug`` (``network``, ``storage`` ...)."""
    candidate = BLUEPRINTS_DIR / f"{slug}.yaml"
    if not candidate.is_file():
        raise FileNotFoundError(f"no blueprint named {slug!r}")
    return candidate
