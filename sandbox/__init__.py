"""Docker sandbox: image provisioning, hardened containers, exec with limits."""
