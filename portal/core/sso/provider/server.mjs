// A real OpenID Connect provider on loopback for the portal's sign-in tests and the demo: node server.mjs PORT CONFIG.json
// CONFIG: {"clients": [...], "accountsPath": "accounts.json"}; accounts are read at every look-up, so a test
// removes a person by rewriting that file. Any password is accepted for a known account (devInteractions).
import fs from "node:fs";
import Provider from "oidc-provider";

const [port, configPath] = process.argv.slice(2);
const config = JSON.parse(fs.readFileSync(configPath, "utf8"));
const accounts = () => JSON.parse(fs.readFileSync(config.accountsPath, "utf8"));

const provider = new Provider(`http://127.0.0.1:${port}`, {
  clients: config.clients,
  pkce: { required: () => true },
  scopes: ["openid", "email", "profile", "offline_access"],
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
  conformIdTokenClaims: false,
  features: { devInteractions: { enabled: true } },
  issueRefreshToken: async (ctx, client) => client.grantTypeAllowed("refresh_token"),
  async findAccount(ctx, sub) {
    const person = accounts()[sub];
    if (!person) return undefined;
    return {
      accountId: sub,
      async claims() {
        return { sub, email: person.email, email_verified: true, name: person.name };
      },
    };
  },
});
provider.on("server_error", (ctx, error) => console.error("server_error", error));
provider.listen(Number(port), "127.0.0.1", () => console.log(`listening ${port}`));
