"""Development scripts and the local Kubernetes harness (``hack.localkube``); not shipped."""
