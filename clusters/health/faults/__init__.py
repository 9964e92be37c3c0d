"""GPU faults and stalled training as the portal records them (opened, kept, closed), and their links to support
interactions."""
