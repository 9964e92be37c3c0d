"""A real OpenID Connect provider on loopback (the certified ``oidc-provider`` under Node.js, ``provider/``), for
the sign-in tests and the demo. ``make install`` installs it from the npm registry (``npm ci`` in ``provider/``).

The provider reads its clients from a JSON file and its people from another, at every look-up (a test removes a
person by rewriting that file). Any password is accepted for a person it knows (its development sign-in pages).
"""
from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

PROVIDER_DIR = Path(__file__).resolve().parent / "provider"
CALLBACK_PATH = "/login/sso/callback/"


def missing() -> str:
    """Why the provider cannot run here (empty when it can)."""
    if shutil.which("node") is None:
        return "no Node.js"
    if not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        return f"no oidc-provider in {PROVIDER_DIR.relative_to(PROVIDER_DIR.parents[3])}/node_modules (make install runs npm ci)"
    return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(folder: Path, *, client_id: str, client_secret: str, portals: list[str],
                 people: dict[str, dict] | None = None) -> tuple[Path, Path]:
    """The provider's configuration (one confidential client whose redirect URIs are each portal address's
    callback) and its people (``{sub: {"email", "name"}}``), written under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    accounts = folder / "accounts.json"
    accounts.write_text(json.dumps(people or {}))
    config = folder / "config.json"
    config.write_text(json.dumps({"accountsPath": str(accounts), "clients": [{
        "client_id": client_id, "client_secret": client_secret,
        "redirect_uris": [f"{portal.rstrip('/')}{CALLBACK_PATH}" for portal in portals],
        "grant_types": ["authorization_code", "refresh_token"], "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_basic"}]}))
    return config, accounts


def command(port: int, config: Path) -> list[str]:
    """The command that runs the provider on 127.0.0.1:``port`` (its issuer is :func:`issuer`)."""
    return [shutil.which("node") or "node", str(PROVIDER_DIR / "server.mjs"), str(port), str(config)]


def issuer(port: int) -> str:
    return f"http://127.0.0.1:{port}"


def discovery(port: int) -> str:
    return f"{issuer(port)}/.well-known/openid-configuration"
