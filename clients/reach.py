"""Whether a Boneyard server answers at an address, and, when none does, what a person should do
about it: start one, pass ``--server``, add or leave out ``--tls``, or pass ``--ca``.

A command asks first with gRPC's standard health check, which is not in the channel's retry
policy (clients/api.py) and does not wait for the connection: with nothing listening it fails
at once instead of after five attempts, and it waits at most ``transport.connect_timeout`` for
an address that does not answer at all. Only when that check fails is the address looked at
more closely, with the standard library's own TCP and TLS, so that the advice says what was
found there (a TLS handshake that succeeds, a certificate that is not trusted) rather than what
gRPC's error text seems to say. A listener that speaks the client's transport but is slow to
answer (a busy machine) is not called absent: the command goes on, and its own calls wait.
"""

from __future__ import annotations

import logging
import socket
import ssl

import click
import grpc
from grpc_health.v1 import health_pb2

from boneyard.clients import api
from boneyard.clients.api import Client, refusal

__all__ = ["START_ONE", "Unreachable", "check", "connect"]

START_ONE = "start one with `make run` (or `boneyard-server`), or pass --server HOST:PORT"
"""The advice when nothing is there: where a server comes from, and how to name another."""

_log = logging.getLogger(__name__)

_HEALTH_CHECK = "/grpc.health.v1.Health/Check"

_NOT_THERE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


class Unreachable(click.ClickException):
    """No Boneyard server answers at the address; the message says what to do."""


def connect(address: str) -> Client:
    """A client of the server at ``address``, once the server has answered (raises
    ``Unreachable`` if it does not, within ``transport.connect_timeout``)."""
    client = Client(address)
    try:
        check(client.channel, address)
    except Unreachable:
        client.close()
        raise
    return client


def check(channel: grpc.Channel, address: str) -> None:
    """Ask the server on ``channel`` whether it is there (any answer will do, even a refusal
    or UNIMPLEMENTED from a server without health checks); raise ``Unreachable`` with advice
    if the call cannot reach it."""
    timeout = api.transport.connect_timeout
    try:
        _health_check(channel, timeout)
    except grpc.RpcError as error:
        answer = refusal(error)
        if answer.code not in _NOT_THERE or answer.reason:
            return  # the server answered: the command's own calls will say what is wrong
        said = _advice(address, timeout, answer.code, answer.message)
        if said is not None:
            raise Unreachable(said) from None


def _advice(
    address: str, timeout: float, code: grpc.StatusCode, grpc_said: str = ""
) -> str | None:
    """What to do when no Boneyard server answered at ``address``: what is found there, and
    the flag or command that fixes it; ``None`` when the check only ran out of time at a
    listener that speaks the client's transport (a server too busy to answer at once is
    left to the command's own calls, which wait and retry)."""
    host, port = _host_port(address)
    if host is None or port is None:
        return f"no Boneyard server answered at {address} — {START_ONE}"
    try:
        raw = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        return (
            f"nothing answered at {address} within {timeout:g} s — {START_ONE} "
            "(--connect-timeout waits longer)"
        )
    except OSError:
        return f"no Boneyard server at {address} — {START_ONE}"
    with raw:
        handshake, why = _handshake(raw, host, timeout)
    tls = api.transport.tls
    if handshake == "trusted" and not tls:
        return f"the server at {address} speaks TLS: add --tls (or set BONEYARD_TLS=1)"
    if handshake == "untrusted" and not tls:
        return (
            f"the server at {address} speaks TLS with a certificate this machine does not "
            f"trust ({why}): add --tls --ca FILE (FILE: its certificate, or its authority's)"
        )
    if handshake == "untrusted":
        given = "the --ca file" if api.transport.ca else "the system's certificate authorities"
        return (
            f"the certificate of the server at {address} is not one {given} vouch for "
            f"({why}): pass --ca FILE (the server's certificate if it signed its own, or its "
            "authority's)"
        )
    if handshake is None and tls and _answers_in_the_clear(address, timeout):
        return f"the server at {address} does not speak TLS: leave out --tls (and BONEYARD_TLS)"
    if code == grpc.StatusCode.DEADLINE_EXCEEDED and (handshake is None) != tls:
        return None
    _log.info("gRPC's own words on %s: %s", address, grpc_said)
    return (
        f"something listens at {address} but does not answer as a Boneyard server — pass the "
        "server's gRPC address with --server HOST:PORT (its port is 50051 unless set)"
    )


def _host_port(address: str) -> tuple[str | None, int | None]:
    """``host:port``, ``[v6]:port`` or ``dns:///host:port`` split; ``(None, None)`` for what
    is not a TCP address (``unix:...``)."""
    target = address.removeprefix("dns:///").removeprefix("ipv4:").removeprefix("ipv6:")
    host, colon, port = target.rpartition(":")
    if not colon or not port.isdigit() or "/" in host or host.startswith("unix"):
        return None, None
    return host.removeprefix("[").removesuffix("]") or "localhost", int(port)


def _handshake(raw: socket.socket, host: str, timeout: float) -> tuple[str | None, str]:
    """Whether the listener speaks TLS: ``"trusted"`` (a certificate this client would take),
    ``"untrusted"`` (TLS, but a certificate it would refuse; with the reason), ``None`` (no
    TLS)."""
    ca = api.transport.ca
    context = ssl.create_default_context(cadata=ca.decode("ascii") if ca else None)
    context.set_alpn_protocols(["h2"])
    raw.settimeout(timeout)
    try:
        with context.wrap_socket(raw, server_hostname=host):
            return "trusted", ""
    except ssl.SSLCertVerificationError as error:
        return "untrusted", str(error.verify_message or error.reason or "not verified")
    except (ssl.SSLError, OSError, ValueError):
        return None, ""


def _answers_in_the_clear(address: str, timeout: float) -> bool:
    """Whether a gRPC server answers at ``address`` without TLS."""
    with grpc.insecure_channel(address) as channel:
        try:
            _health_check(channel, timeout)
        except grpc.RpcError as error:
            return refusal(error).code not in _NOT_THERE
    return True


def _health_check(channel: grpc.Channel, timeout: float) -> None:
    """gRPC's standard health check of the whole server, failing at once when nothing is
    there (``wait_for_ready`` off). (The method by its path: the health stubs' types leave
    ``HealthStub.Check`` out.)"""
    check = channel.unary_unary(
        _HEALTH_CHECK,
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )
    check(health_pb2.HealthCheckRequest(), timeout=timeout, wait_for_ready=False)
