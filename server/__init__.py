"""Boneyard server: gRPC services, application layer, store and event fan-out."""
