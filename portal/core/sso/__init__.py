"""Single sign-on: each organization may register its own OpenID Connect provider (and the program one for AWS
staff); people of the e-mail domains a provider owns sign in through it. authlib does the protocol (discovery,
authorization code with PKCE, the ID token's signature, issuer, audience, expiry and nonce)."""
