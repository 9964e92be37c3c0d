"""The portal's core, the layer every app stands on: organizations, people and roles, the access policy, cycles,
jobs, the timeline, AWS sessions, sign-in and its second factors, the audit trail, the API's base and /metrics."""
