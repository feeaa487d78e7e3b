"""Fixtures of the archive tests: one real ``boneyard-server`` process for the session (on a
SQLite file of its own), and finished games of Texas 42 and Moon played on it over gRPC."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from archive_helpers import NAMES, ArchiveServer, play_over_grpc

from boneyard.api.v1 import archive_pb2_grpc, game_service_pb2_grpc
from tests.server.process_helpers import ServerProcess


@pytest.fixture(scope="session")
def archive_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ArchiveServer]:
    directory: Path = tmp_path_factory.mktemp("archive-server")
    url = f"sqlite:///{directory / 'boneyard.db'}"
    with ServerProcess.start(directory / "server.log", url) as process:
        channel: grpc.Channel = process.channel()
        yield ArchiveServer(
            process,
            url,
            game_service_pb2_grpc.GameServiceStub(channel),
            archive_pb2_grpc.ArchiveServiceStub(channel),
        )


@pytest.fixture(scope="session")
def finished(archive_server: ArchiveServer) -> dict[str, str]:
    """A finished game of each of texas42 and moon, played over gRPC: preset -> game id."""
    return {
        preset: play_over_grpc(archive_server.games, preset, seed=7, names=names)[0]
        for preset, names in NAMES.items()
    }
