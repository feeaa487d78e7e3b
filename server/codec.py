"""Moved to ``boneyard.codec`` (shared by the server, the clients and the archive verifier);
this alias keeps old imports working while they are updated."""

import sys

import boneyard.codec as _codec

sys.modules[__name__] = _codec
