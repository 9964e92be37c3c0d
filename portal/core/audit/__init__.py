"""The audit trail: who signed in, used a second factor or an API token, exported data, or acted in a customer's AWS
account, when and from where. Append-only; staff read all of it, each organization its own."""
