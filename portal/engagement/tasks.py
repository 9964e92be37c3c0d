"""Background work of the engagement app.

Replies in Slack threads are notification deliveries (``portal.notifications``, channel "thread"), sent by its
``deliver`` task and swept like the others."""
