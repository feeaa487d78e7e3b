"""Boneyard clients: the CLI and the bot runner, speaking only the gRPC API."""
