"""The API as Python: the code generated from proto/ (``boneyard.api.v1``, never edited; ``make
proto``) and ``codec``, the one translation between the engine's values and the wire's
messages. The codec encodes and decodes; it decides nothing (what a seat may see of an event or
of a game is the engine's ``view_event`` and ``view``).

``error_details`` exposes the messages of a refusal's details, ``google.rpc.Status`` and
``ErrorInfo`` (googleapis-common-protos'; proto/google/rpc/ ships their files), and reads a
refused call's ``ErrorInfo`` and its ``ErrorReason``.

Clients, the server and the record library all speak the API through this package.
"""
