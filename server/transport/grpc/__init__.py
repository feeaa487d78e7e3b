"""The gRPC port: interceptors (credentials, drain, errors, limits, observing), keepalive
settings, and server reflection (v1 and v1alpha)."""
