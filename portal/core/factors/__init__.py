"""A second factor (TOTP, with recovery codes) before acting on a customer's AWS account.

``policy`` names the protected actions in one table; the middleware refuses them without a recent second factor
(pages: a verified session; the API: a current code in ``X-Second-Factor``). Devices are django-otp's."""
