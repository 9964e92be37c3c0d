"""Local development and the demo: debug on, embedded defaults, and the development package (``sandbox``: the
embedded AWS endpoint and the demo program) where it is present; the production image leaves it out."""
from importlib.util import find_spec

from .base import *  # noqa: F403
from .base import INSTALLED_APPS, env

DEBUG = env.bool("DEBUG", default=True)

if find_spec("sandbox") is not None:
    INSTALLED_APPS = [*INSTALLED_APPS, "sandbox"]
