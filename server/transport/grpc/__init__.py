"""The gRPC port: every handler wrapped in the one pipeline as it is added (``piping``:
credentials, drain, errors, limits, observing), the services found by name (``by_name``),
keepalive settings, and server reflection (v1 and v1alpha)."""
